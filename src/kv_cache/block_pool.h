// All KV blocks of the cache as integers: reference counts, the free queue, and the map from
// block hash to the block that holds that prefix. Knows nothing about tensors.
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
  struct Options {
    int32_t num_blocks = 0;
    int32_t block_size = 16;
  };
  explicit BlockPool(const Options& options);

  int32_t num_blocks() const { return options_.num_blocks; }
  int32_t block_size() const { return options_.block_size; }
  int32_t num_free_blocks() const { return free_queue_.size(); }
  // Fraction of blocks in use by requests (cached-but-free blocks count as free).
  double usage() const { return 1.0 - double(num_free_blocks()) / options_.num_blocks; }
  int32_t ref_count(int32_t block_id) const { return blocks_[block_id].ref_count; }

  // Takes `count` blocks (count <= num_free_blocks()) from the head of the free queue, each with
  // reference count 1; a taken block that held cached KV is evicted from the hash map.
  std::vector<int32_t> Allocate(int32_t count);
  // Adds a reference to each block (prefix-cache hits); free ones leave the free queue.
  void Touch(std::span<const int32_t> block_ids);
  // Drops a reference from each block; those reaching zero join the free queue's tail in the
  // given order, so the caller lists the blocks it wants evicted first at the front.
  void Free(std::span<const int32_t> block_ids);

  // The block caching `hash` whose tokens equal `token_ids` (collision-checked).
  std::optional<int32_t> FindCached(BlockHash hash, std::span<const int32_t> token_ids) const;
  // Records that a full block holds `token_ids` with `hash`. A hash already cached by another
  // block is left as it is (the newer block stays uncached).
  void Cache(int32_t block_id, BlockHash hash, std::span<const int32_t> token_ids);
  // Forgets every cached hash; refused (false) while any block is in use.
  bool ResetPrefixCache();

 private:
  struct Block {
    int32_t ref_count = 0;
    std::optional<BlockHash> hash;
    std::vector<int32_t> token_ids;  // [block_size] when cached
  };
  void Evict(int32_t block_id);

  Options options_;
  std::vector<Block> blocks_;
  FreeBlockQueue free_queue_;
  std::unordered_map<BlockHash, int32_t> cached_blocks_;
};

}  // namespace vllm
