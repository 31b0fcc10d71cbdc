#include "kv_cache/block_pool.h"

#include <algorithm>

namespace vllm {

BlockPool::BlockPool(const Options& options)
    : options_(options), blocks_(options.num_blocks), free_queue_(options.num_blocks) {
  if (options.reserve_null_block) free_queue_.Remove(kNullBlockId);
}

std::vector<int32_t> BlockPool::Allocate(int32_t count) {
  std::vector<int32_t> block_ids;
  block_ids.reserve(count);
  for (int32_t i = 0; i < count; ++i) {
    int32_t id = free_queue_.PopFront();
    Evict(id);
    blocks_[id].ref_count = 1;
    block_ids.push_back(id);
  }
  return block_ids;
}

void BlockPool::Touch(std::span<const int32_t> block_ids) {
  for (int32_t id : block_ids) {
    if (IsNullBlock(id)) continue;
    if (blocks_[id].ref_count == 0 && free_queue_.Contains(id)) free_queue_.Remove(id);
    ++blocks_[id].ref_count;
  }
}

void BlockPool::Free(std::span<const int32_t> block_ids) {
  for (int32_t id : block_ids) {
    if (IsNullBlock(id)) continue;
    if (--blocks_[id].ref_count == 0) free_queue_.PushBack(id);
  }
}

std::optional<int32_t> BlockPool::FindCached(BlockHash hash, std::span<const int32_t> token_ids,
                                             int32_t group) const {
  auto it = cached_blocks_.find({hash, group});
  if (it == cached_blocks_.end()) return std::nullopt;
  const Block& block = blocks_[it->second];
  if (!std::equal(block.token_ids.begin(), block.token_ids.end(), token_ids.begin(),
                  token_ids.end())) {
    return std::nullopt;  // a hash collision: different tokens
  }
  return it->second;
}

void BlockPool::Cache(int32_t block_id, BlockHash hash, std::span<const int32_t> token_ids,
                      int32_t group) {
  Block& block = blocks_[block_id];
  const CacheKey key{hash, group};
  if (IsNullBlock(block_id) || block.cache_key.has_value() || cached_blocks_.count(key) != 0) {
    return;
  }
  block.cache_key = key;
  block.token_ids.assign(token_ids.begin(), token_ids.end());
  cached_blocks_.emplace(key, block_id);
}

void BlockPool::Evict(int32_t block_id) {
  Block& block = blocks_[block_id];
  if (!block.cache_key.has_value()) return;
  cached_blocks_.erase(*block.cache_key);
  block.cache_key.reset();
  block.token_ids.clear();
}

bool BlockPool::ResetPrefixCache() {
  if (num_free_blocks() != num_usable_blocks()) return false;
  for (int32_t id = 0; id < options_.num_blocks; ++id) Evict(id);
  return true;
}

}  // namespace vllm
