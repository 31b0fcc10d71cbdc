// All KV blocks of the cache as integers: reference counts, the free queue, and the map from
// (KV cache group, block hash) to the block that holds that prefix for that group. Knows nothing
// about tensors.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv_cache/block_hash.h"
#include "kv_cache/free_block_queue.h"

namespace vllm {

class BlockPool {
 public:
  // Block 0 when reserved: the placeholder a sliding-window group's block table holds for blocks
  // that left its window. Never handed out, never freed, never cached.
  static constexpr int32_t kNullBlockId = 0;

  struct Options {
    int32_t num_blocks = 0;
    int32_t block_size = 16;
    bool reserve_null_block = false;
  };
  explicit BlockPool(const Options& options);

  int32_t num_blocks() const { return options_.num_blocks; }
  // The blocks that can be handed out: all but the null block when it is reserved.
  int32_t num_usable_blocks() const {
    return options_.num_blocks - (options_.reserve_null_block ? 1 : 0);
  }
  int32_t block_size() const { return options_.block_size; }
  int32_t num_free_blocks() const { return free_queue_.size(); }
  // Fraction of usable blocks in use by requests (cached-but-free blocks count as free).
  double usage() const { return 1.0 - double(num_free_blocks()) / num_usable_blocks(); }
  // Usable blocks held by requests now (cached-but-free blocks count as free).
  int32_t num_blocks_in_use() const { return num_usable_blocks() - num_free_blocks(); }
  int32_t ref_count(int32_t block_id) const { return blocks_[block_id].ref_count; }
  bool IsNullBlock(int32_t block_id) const {
    return options_.reserve_null_block && block_id == kNullBlockId;
  }

  // Takes `count` blocks (count <= num_free_blocks()) from the head of the free queue, each with
  // reference count 1; a taken block that held cached KV is evicted from the hash map.
  std::vector<int32_t> Allocate(int32_t count);
  // Adds a reference to each block (prefix-cache hits); free ones leave the free queue. The null
  // block is skipped.
  void Touch(std::span<const int32_t> block_ids);
  // Drops a reference from each block; those reaching zero join the free queue's tail in the
  // given order, so the caller lists the blocks it wants evicted first at the front. The null
  // block is skipped.
  void Free(std::span<const int32_t> block_ids);

  // The block caching `hash` for KV cache group `group` whose tokens equal `token_ids`
  // (collision-checked). Groups cache separately: each holds its own layers' KV for a prefix.
  std::optional<int32_t> FindCached(BlockHash hash, std::span<const int32_t> token_ids,
                                    int32_t group = 0) const;
  // Records that a full block of group `group` holds `token_ids` with `hash`. A (group, hash)
  // already cached by another block is left as it is (the newer block stays uncached).
  void Cache(int32_t block_id, BlockHash hash, std::span<const int32_t> token_ids,
             int32_t group = 0);
  // Forgets every cached hash; refused (false) while any block is in use.
  bool ResetPrefixCache();

 private:
  struct CacheKey {
    BlockHash hash = 0;
    int32_t group = 0;
    bool operator==(const CacheKey&) const = default;
  };
  struct CacheKeyHash {
    size_t operator()(const CacheKey& key) const {
      return key.hash ^ (static_cast<uint64_t>(key.group) * 0x9e3779b97f4a7c15ull);
    }
  };
  struct Block {
    int32_t ref_count = 0;
    std::optional<CacheKey> cache_key;
    std::vector<int32_t> token_ids;  // [block_size] when cached
  };
  void Evict(int32_t block_id);

  Options options_;
  std::vector<Block> blocks_;
  FreeBlockQueue free_queue_;
  std::unordered_map<CacheKey, int32_t, CacheKeyHash> cached_blocks_;
};

}  // namespace vllm
