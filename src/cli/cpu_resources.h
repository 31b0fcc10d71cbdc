// vLLM's memory and thread settings as this build's engine takes them: --gpu-memory-utilization
// and its CPU backend's environment (VLLM_CPU_KVCACHE_SPACE, VLLM_CPU_OMP_THREADS_BIND).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/expected.h"
#include "vllm/engine_args.h"

namespace vllm {

struct CpuResourceFlags {
  std::optional<double> gpu_memory_utilization;   // --gpu-memory-utilization, in (0, 1]
  bool kv_cache_memory_bytes_given = false;       // --kv-cache-memory-bytes wins over the others
  bool threads_given = false;                     // -t/--threads wins over the binding
  std::optional<int64_t> available_memory_bytes;  // the RAM the KV cache may come from
};

// The KV cache bytes, unless --kv-cache-memory-bytes is given: VLLM_CPU_KVCACHE_SPACE GiB, else
// gpu_memory_utilization of the available memory less the model's weight files. The threads,
// unless -t is given, from VLLM_CPU_OMP_THREADS_BIND: `auto`, `all` and `nobind` keep one per
// core; a CPU list such as 0-3,8 gives one thread per CPU of it (they are not pinned: a warning
// says so).
Status ApplyCpuResources(const CpuResourceFlags& flags, EngineArgs* args);

// The CPUs a list such as "0-3,8" names; refused when it does not parse or has '|' (one list
// per rank: tensor parallelism).
Expected<int> CountCpusInList(const std::string& list);

}  // namespace vllm
