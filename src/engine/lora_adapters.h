// The engine's LoRA adapters (vLLM's LoRA model manager on the CPU side): the checks of the LoRA
// engine arguments, the base model's shape as the adapter loaders need it, and the cache of
// loaded adapters (--max-cpu-loras, least recently used evicted) that requests resolve through.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "lora/lora_cache.h"
#include "model/model_loader.h"
#include "vllm/engine_args.h"
#include "vllm/lora_request.h"

namespace vllm {

// vLLM's LoRAConfig checks: max_loras >= 1, max_lora_rank one of vLLM's ranks, max_cpu_loras >=
// max_loras, lora_dtype auto / float16 / bfloat16 / float32 (checked with enable_lora only).
Status CheckLoraArgs(const EngineArgs& args);

// --lora-dtype resolved for `model` (CheckLoraArgs must pass): auto is the model's dtype as
// --kv-cache-dtype auto reads it (AutoKvCacheDtype): f32 for f32 weights, so an f32 base runs its
// adapters exactly, bf16 for any other (bf16 / f16 / quantized); float32 and bfloat16 as named;
// float16 is stored as bf16 (the same bytes a step reads; the engine says so once).
lora::LoraDtype LoraDtypeFor(const EngineArgs& args, const LoadedModel& model);

// vLLM's refusal of a request with an adapter when --enable-lora is off.
std::string LoraNotEnabledMessage(const LoraRequest& request);

class LoraAdapters {
 public:
  // args.enable_lora must be set and CheckLoraArgs must pass.
  static Expected<std::unique_ptr<LoraAdapters>> Create(const EngineArgs& args,
                                                        const LoadedModel& model);

  // The request's adapter, loaded on first use (errors name the adapter and the tensor).
  Expected<std::shared_ptr<const lora::LoraWeights>> Resolve(const LoraRequest& request) {
    return cache_->Get(request);
  }
  // vLLM's add_lora / remove_lora / list_loras.
  Status Add(const LoraRequest& request) { return cache_->Get(request).status(); }
  bool Remove(int64_t lora_int_id) { return cache_->Remove(lora_int_id); }
  std::vector<int64_t> List() const { return cache_->Ids(); }

 private:
  explicit LoraAdapters(std::unique_ptr<lora::LoraCache> cache) : cache_(std::move(cache)) {}
  std::unique_ptr<lora::LoraCache> cache_;
};

// A request's adapter: null for none, else `adapters`' (loaded on first use); refused when LoRA
// is off (`adapters` null).
Expected<std::shared_ptr<const lora::LoraWeights>> ResolveLoraRequest(
    LoraAdapters* adapters, const std::optional<LoraRequest>& request);

}  // namespace vllm
