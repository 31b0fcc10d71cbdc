// vLLM v1's KV cache manager, in integers: which blocks each request holds, prefix-cache lookups
// over chained block hashes, allocation for the tokens a step schedules, and freeing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "kv_cache/block_pool.h"

namespace vllm {

class KvCacheManager {
 public:
  struct Options {
    int32_t num_blocks = 0;
    int32_t block_size = 16;
    bool enable_prefix_caching = true;
  };
  // A prefix-cache hit: cached blocks covering the first num_computed_tokens tokens.
  struct ComputedBlocks {
    std::vector<int32_t> block_ids;
    int64_t num_computed_tokens = 0;
  };
  // Prefix-cache counters in tokens, as vLLM's vllm:prefix_cache_{queries,hits}_total.
  struct Stats {
    int64_t prefix_cache_queries = 0;
    int64_t prefix_cache_hits = 0;
  };

  explicit KvCacheManager(const Options& options);

  int32_t block_size() const { return pool_.block_size(); }
  int32_t num_free_blocks() const { return pool_.num_free_blocks(); }
  double usage() const { return pool_.usage(); }
  const Stats& stats() const { return stats_; }

  // The longest run of cached full blocks that prefixes `token_ids`, stopping at least one token
  // short of the end so the last prompt token's logits are computed. Counts a query and its hits.
  ComputedBlocks GetComputedBlocks(std::span<const int32_t> token_ids,
                                   const BlockHashExtras& extras);

  // Gives `request_id` blocks for num_computed_tokens + num_new_tokens tokens, first taking
  // `new_computed_block_ids` (from GetComputedBlocks, on the request's first allocation).
  // Returns the request's whole block table, or nullopt (and changes nothing) when too few blocks
  // are free.
  std::optional<std::span<const int32_t>> AllocateSlots(
      const std::string& request_id, int64_t num_computed_tokens, int64_t num_new_tokens,
      std::span<const int32_t> new_computed_block_ids = {});

  // Registers the request's blocks that became full (the first num_computed_tokens of
  // `token_ids` are computed) in the prefix cache.
  void CacheFullBlocks(const std::string& request_id, std::span<const int32_t> token_ids,
                       int64_t num_computed_tokens, const BlockHashExtras& extras);

  // Returns every block of the request; its tail blocks are the first to be evicted.
  void Free(const std::string& request_id);
  std::span<const int32_t> block_ids(const std::string& request_id) const;

  bool ResetPrefixCache() { return pool_.ResetPrefixCache(); }

 private:
  struct RequestBlocks {
    std::vector<int32_t> block_ids;
    std::vector<BlockHash> block_hashes;  // hashes of its full blocks, in order
  };

  bool enable_prefix_caching_;
  BlockPool pool_;
  std::unordered_map<std::string, RequestBlocks> requests_;
  Stats stats_;
};

}  // namespace vllm
