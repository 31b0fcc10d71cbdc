// vLLM's CPU adapter cache (--max-cpu-loras): adapters loaded once and kept by lora_int_id,
// least recently used evicted beyond capacity. Thread-safe: the API thread (loading an adapter
// named by a request or /v1/load_lora_adapter) and the engine thread share it. Eviction only
// drops the cache's reference: a step that still holds an adapter's shared_ptr keeps it alive.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "common/expected.h"
#include "lora/lora_base_shape.h"
#include "lora/lora_loader.h"
#include "lora/lora_weights.h"
#include "vllm/lora_request.h"

namespace vllm::lora {

struct LoraCacheOptions {
  int64_t max_cpu_loras = 1;  // adapters kept; at least 1
  LoraBaseShape base;
  LoraLoadOptions load;
};

class LoraCache {
 public:
  static Expected<std::unique_ptr<LoraCache>> Create(LoraCacheOptions options);

  // The adapter of request.lora_int_id, loaded on a miss (and then the most recently used).
  // An id already held with another name or path, or a name held under another id, is an error;
  // so is an id below 1.
  Expected<std::shared_ptr<const LoraWeights>> Get(const LoraRequest& request);
  // Drops an adapter; false when it was not held.
  bool Remove(int64_t lora_int_id);
  // The ids held, most recently used first.
  std::vector<int64_t> Ids() const;

 private:
  explicit LoraCache(LoraCacheOptions options) : options_(std::move(options)) {}

  struct Entry {
    LoraRequest request;
    std::shared_ptr<const LoraWeights> weights;
    std::list<int64_t>::iterator recency;  // its place in recency_
  };
  // The entry of request's id when it matches the request; nullptr when the id is not held.
  Expected<Entry*> FindLocked(const LoraRequest& request);
  // An entry's adapter, now the most recently used.
  std::shared_ptr<const LoraWeights> UseLocked(Entry* entry);

  const LoraCacheOptions options_;
  mutable std::mutex mutex_;
  std::map<int64_t, Entry> entries_;  // by lora_int_id
  std::list<int64_t> recency_;        // ids, most recently used first
};

}  // namespace vllm::lora
