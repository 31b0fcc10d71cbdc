// vLLM v1's KV cache manager, in integers: which blocks each request holds in each KV cache group
// (see kv_cache_group.h), prefix-cache lookups over chained block hashes, allocation for the
// tokens a step schedules, and freeing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "kv_cache/block_pool.h"
#include "kv_cache/kv_cache_group.h"

namespace vllm {

class KvCacheManager {
 public:
  // The placeholder entry of a sliding group's block table for a block that left the window.
  static constexpr int32_t kNullBlockId = BlockPool::kNullBlockId;

  struct Options {
    int32_t num_blocks = 0;
    int32_t block_size = 16;
    bool enable_prefix_caching = true;
    // One entry per KV cache group; empty means one full-attention group. With any sliding group
    // block kNullBlockId is reserved, leaving num_blocks - 1 blocks to hand out.
    std::vector<KvCacheGroupSpec> groups;
  };
  // A prefix-cache hit covering the first num_computed_tokens tokens:
  //   group_block_ids: [num_groups][num_computed_tokens / block_size], a sliding group's table
  //                    holding kNullBlockId before its window.
  struct ComputedBlocks {
    std::vector<std::vector<int32_t>> group_block_ids;
    int64_t num_computed_tokens = 0;
  };
  // A request's block tables, [num_groups][ceil(num_tokens / block_size)]: entry pos / block_size
  // of group g holds position pos for every position that a token still to be computed sees.
  using BlockTables = std::span<const std::vector<int32_t>>;
  // Prefix-cache counters in tokens, as vLLM's vllm:prefix_cache_{queries,hits}_total.
  struct Stats {
    int64_t prefix_cache_queries = 0;
    int64_t prefix_cache_hits = 0;
  };

  explicit KvCacheManager(const Options& options);

  int32_t block_size() const { return pool_.block_size(); }
  int32_t num_groups() const { return static_cast<int32_t>(groups_.size()); }
  const KvCacheGroupSpec& group(int32_t group) const { return groups_[group]; }
  int32_t num_free_blocks() const { return pool_.num_free_blocks(); }
  double usage() const { return pool_.usage(); }
  int32_t num_blocks_in_use() const { return pool_.num_blocks_in_use(); }
  const Stats& stats() const { return stats_; }

  // The longest prefix every group can serve from the cache (see FindLongestCacheHit), stopping
  // at least one token short of the end so the last prompt token's logits are computed. Counts a
  // query and its hits.
  ComputedBlocks GetComputedBlocks(std::span<const int32_t> token_ids,
                                   const BlockHashExtras& extras);

  // Gives `request_id` slots for num_computed_tokens + num_new_tokens tokens in every group.
  // The first num_computed_tokens tokens are covered by the blocks the request holds or, on its
  // first allocation, by the hit `new_computed_blocks` from GetComputedBlocks (with
  // num_computed_tokens == its num_computed_tokens; an empty group_block_ids is no hit).
  // num_computed_tokens never decreases between calls. In a sliding group the held blocks before
  // FirstVisibleBlock(num_computed_tokens) are released to the pool (cached ones stay findable
  // until evicted) and become null entries; blocks there are never allocated. All or nothing:
  // returns the tables, or nullopt and changes nothing when the free blocks, plus those the
  // window releases in this call, do not cover the new blocks and the free hit blocks.
  std::optional<BlockTables> AllocateSlots(const std::string& request_id,
                                           int64_t num_computed_tokens, int64_t num_new_tokens,
                                           const ComputedBlocks& new_computed_blocks);
  // The same without a prefix-cache hit (a running request, or a cache miss).
  std::optional<BlockTables> AllocateSlots(const std::string& request_id,
                                           int64_t num_computed_tokens, int64_t num_new_tokens) {
    return AllocateSlots(request_id, num_computed_tokens, num_new_tokens, ComputedBlocks());
  }

  // Registers the request's blocks that became full (the first num_computed_tokens of
  // `token_ids` are computed) in the prefix cache, in every group that holds them.
  void CacheFullBlocks(const std::string& request_id, std::span<const int32_t> token_ids,
                       int64_t num_computed_tokens, const BlockHashExtras& extras);

  // Returns every block of the request, group by group; within a group its tail blocks are the
  // first to be evicted.
  void Free(const std::string& request_id);
  BlockTables block_tables(const std::string& request_id) const;
  std::span<const int32_t> block_ids(const std::string& request_id, int32_t group = 0) const;
  // The blocks the request holds over all groups, null entries excluded.
  int64_t num_held_blocks(const std::string& request_id) const;

  bool ResetPrefixCache() { return pool_.ResetPrefixCache(); }

 private:
  struct RequestBlocks {
    std::vector<std::vector<int32_t>> tables;  // [num_groups][num_table_blocks], equal lengths
    std::vector<BlockHash> block_hashes;       // hashes of its full blocks, in order
  };

  bool enable_prefix_caching_;
  std::vector<KvCacheGroupSpec> groups_;
  BlockPool pool_;
  std::unordered_map<std::string, RequestBlocks> requests_;
  Stats stats_;
};

}  // namespace vllm
