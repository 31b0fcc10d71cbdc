// The KV cache's byte budget, as vLLM's CPU backend picks it, for every entry point (the CLI
// commands, the server and the Python package all create their engine through LLMEngine::Create):
//   1. kv_cache_memory_bytes (--kv-cache-memory-bytes), when given;
//   2. else VLLM_CPU_KVCACHE_SPACE GiB, when the environment sets it (empty or 0: not set);
//   3. else gpu_memory_utilization (--gpu-memory-utilization) of the memory available before the
//      model loads, less the model's weights;
//   4. else kDefaultKvCacheMemoryBytes.
// The budget is planned before the model loads (the arguments checked, the memory measured) and
// settled once its weights are known.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/expected.h"
#include "model/model_loader.h"
#include "vllm/engine_args.h"

namespace vllm {

class KvCacheMemory {
 public:
  // Refuses a gpu_memory_utilization outside (0, 1] (vLLM's words), a VLLM_CPU_KVCACHE_SPACE that
  // is not a number of GiB, and a share of memory when `available_memory_bytes` is unknown.
  static Expected<KvCacheMemory> Plan(const EngineArgs& args,
                                      std::optional<int64_t> available_memory_bytes);

  // The budget beside weights of `weight_bytes`; refused when a share of memory leaves nothing.
  Expected<int64_t> BytesBeside(int64_t weight_bytes) const;

 private:
  std::optional<int64_t> fixed_bytes_;  // steps 1, 2 and 4: the weights do not matter
  double memory_share_ = 0;             // step 3: this share of
  int64_t available_memory_bytes_ = 0;  // less the weights
};

// The weights' bytes as the model's files store them (the GGUF file's tensors, or the checkpoint's
// safetensors tensors): what they take in memory beside the KV cache.
int64_t StoredWeightBytes(const LoadedModel& model);

}  // namespace vllm
