#include "kv_cache/kv_cache_manager.h"

#include <algorithm>

namespace vllm {

KvCacheManager::KvCacheManager(const Options& options)
    : enable_prefix_caching_(options.enable_prefix_caching),
      pool_({.num_blocks = options.num_blocks, .block_size = options.block_size}) {}

KvCacheManager::ComputedBlocks KvCacheManager::GetComputedBlocks(
    std::span<const int32_t> token_ids, const BlockHashExtras& extras) {
  ComputedBlocks computed;
  if (!enable_prefix_caching_) return computed;
  const int64_t block_size = pool_.block_size();
  // A hit may cover at most len - 1 tokens: the last token must run to produce logits.
  const int64_t max_blocks = (static_cast<int64_t>(token_ids.size()) - 1) / block_size;
  BlockHash parent = 0;
  for (int64_t b = 0; b < max_blocks; ++b) {
    auto block_tokens = token_ids.subspan(b * block_size, block_size);
    parent = HashBlockTokens(parent, block_tokens, extras);
    auto block_id = pool_.FindCached(parent, block_tokens);
    if (!block_id) break;
    computed.block_ids.push_back(*block_id);
  }
  computed.num_computed_tokens = static_cast<int64_t>(computed.block_ids.size()) * block_size;
  stats_.prefix_cache_queries += static_cast<int64_t>(token_ids.size());
  stats_.prefix_cache_hits += computed.num_computed_tokens;
  return computed;
}

std::optional<std::span<const int32_t>> KvCacheManager::AllocateSlots(
    const std::string& request_id, int64_t num_computed_tokens, int64_t num_new_tokens,
    std::span<const int32_t> new_computed_block_ids) {
  RequestBlocks& request = requests_[request_id];
  const int64_t block_size = pool_.block_size();
  const int64_t num_required =
      (num_computed_tokens + num_new_tokens + block_size - 1) / block_size;
  const int64_t num_held =
      static_cast<int64_t>(request.block_ids.size() + new_computed_block_ids.size());
  const int64_t num_to_allocate = std::max<int64_t>(0, num_required - num_held);
  // Hit blocks that are currently free leave the free queue when touched: count them too.
  const int64_t num_free_hits =
      std::count_if(new_computed_block_ids.begin(), new_computed_block_ids.end(),
                    [this](int32_t id) { return pool_.ref_count(id) == 0; });
  if (num_to_allocate + num_free_hits > pool_.num_free_blocks()) {
    if (request.block_ids.empty()) requests_.erase(request_id);
    return std::nullopt;
  }
  pool_.Touch(new_computed_block_ids);
  request.block_ids.insert(request.block_ids.end(), new_computed_block_ids.begin(),
                           new_computed_block_ids.end());
  std::vector<int32_t> fresh = pool_.Allocate(static_cast<int32_t>(num_to_allocate));
  request.block_ids.insert(request.block_ids.end(), fresh.begin(), fresh.end());
  return std::span<const int32_t>(request.block_ids);
}

void KvCacheManager::CacheFullBlocks(const std::string& request_id,
                                     std::span<const int32_t> token_ids,
                                     int64_t num_computed_tokens, const BlockHashExtras& extras) {
  if (!enable_prefix_caching_) return;
  auto it = requests_.find(request_id);
  if (it == requests_.end()) return;
  RequestBlocks& request = it->second;
  const int64_t block_size = pool_.block_size();
  const int64_t num_full_blocks =
      std::min<int64_t>(num_computed_tokens / block_size, request.block_ids.size());
  for (int64_t b = static_cast<int64_t>(request.block_hashes.size()); b < num_full_blocks; ++b) {
    auto block_tokens = token_ids.subspan(b * block_size, block_size);
    BlockHash parent = b == 0 ? 0 : request.block_hashes[b - 1];
    BlockHash hash = HashBlockTokens(parent, block_tokens, extras);
    request.block_hashes.push_back(hash);
    pool_.Cache(request.block_ids[b], hash, block_tokens);
  }
}

void KvCacheManager::Free(const std::string& request_id) {
  auto it = requests_.find(request_id);
  if (it == requests_.end()) return;
  std::vector<int32_t> tail_first(it->second.block_ids.rbegin(), it->second.block_ids.rend());
  pool_.Free(tail_first);
  requests_.erase(it);
}

std::span<const int32_t> KvCacheManager::block_ids(const std::string& request_id) const {
  auto it = requests_.find(request_id);
  if (it == requests_.end()) return {};
  return it->second.block_ids;
}

}  // namespace vllm
