#include "kv_cache/kv_cache_manager.h"

#include <algorithm>
#include <utility>

namespace vllm {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::vector<KvCacheGroupSpec> GroupsOrOneFull(const std::vector<KvCacheGroupSpec>& groups) {
  return groups.empty() ? std::vector<KvCacheGroupSpec>(1) : groups;
}

bool AnySliding(const std::vector<KvCacheGroupSpec>& groups) {
  return std::any_of(groups.begin(), groups.end(),
                     [](const KvCacheGroupSpec& spec) { return spec.is_sliding(); });
}

}  // namespace

KvCacheManager::KvCacheManager(const Options& options)
    : enable_prefix_caching_(options.enable_prefix_caching),
      groups_(GroupsOrOneFull(options.groups)),
      pool_({.num_blocks = options.num_blocks,
             .block_size = options.block_size,
             .reserve_null_block = AnySliding(groups_)}) {}

KvCacheManager::ComputedBlocks KvCacheManager::GetComputedBlocks(std::span<const int32_t> token_ids,
                                                                 const BlockHashExtras& extras) {
  ComputedBlocks computed;
  computed.group_block_ids.resize(groups_.size());
  if (!enable_prefix_caching_) return computed;
  const int64_t block_size = pool_.block_size();
  // A hit may cover at most len - 1 tokens: the last token must run to produce logits.
  const int64_t max_blocks =
      std::max<int64_t>(0, static_cast<int64_t>(token_ids.size()) - 1) / block_size;
  // Hashes of blocks [0, hashes.size()), chained on demand: a full-attention-only search stops
  // at its first miss, a sliding one starts from the right.
  std::vector<BlockHash> hashes;
  auto block_tokens = [&](int64_t b) { return token_ids.subspan(b * block_size, block_size); };
  auto lookup = [&](int32_t group, int64_t b) {
    while (static_cast<int64_t>(hashes.size()) <= b) {
      const BlockHash parent = hashes.empty() ? 0 : hashes.back();
      hashes.push_back(HashBlockTokens(parent, block_tokens(hashes.size()), extras));
    }
    return pool_.FindCached(hashes[b], block_tokens(b), group);
  };
  computed.group_block_ids =
      FindLongestCacheHit(groups_, block_size, max_blocks, kNullBlockId, lookup);
  computed.num_computed_tokens =
      static_cast<int64_t>(computed.group_block_ids.front().size()) * block_size;
  stats_.prefix_cache_queries += static_cast<int64_t>(token_ids.size());
  stats_.prefix_cache_hits += computed.num_computed_tokens;
  return computed;
}

// Each group's table becomes [held | hit | new] with num_table_blocks entries, the same for all
// groups (a hit comes only with a request's first allocation, when nothing is held). In a
// sliding group the held entries before first_visible leave the window:
//
//   [ null ... null | released ....... | kept ............ | new ............ ]
//   0      release_begin      release_end = first_visible  num_held  num_table_blocks
//
// Entries before release_begin were nulled by earlier calls, and a hit holds the null block
// before its own window already. Everything is counted before anything changes, so a refusal
// leaves no trace.
std::optional<KvCacheManager::BlockTables> KvCacheManager::AllocateSlots(
    const std::string& request_id, int64_t num_computed_tokens, int64_t num_new_tokens,
    const ComputedBlocks& new_computed_blocks) {
  auto [it, inserted] = requests_.try_emplace(request_id);
  RequestBlocks& request = it->second;
  if (inserted) request.tables.resize(groups_.size());
  const int64_t block_size = pool_.block_size();
  auto hit_of = [&](size_t g) {
    const auto& hits = new_computed_blocks.group_block_ids;
    return g < hits.size() ? std::span<const int32_t>(hits[g]) : std::span<const int32_t>();
  };
  int64_t num_table_blocks = CeilDiv(num_computed_tokens + num_new_tokens, block_size);
  for (size_t g = 0; g < groups_.size(); ++g) {
    num_table_blocks =
        std::max<int64_t>(num_table_blocks, request.tables[g].size() + hit_of(g).size());
  }

  struct Released {
    int64_t begin = 0;
    int64_t end = 0;
  };
  std::vector<Released> released(groups_.size());
  int64_t num_fresh = 0;            // blocks to allocate
  int64_t num_free_hits = 0;        // hit blocks that leave the free queue when touched
  int64_t num_freed_by_window = 0;  // released blocks whose last reference this is
  for (size_t g = 0; g < groups_.size(); ++g) {
    const std::vector<int32_t>& table = request.tables[g];
    const std::span<const int32_t> hit = hit_of(g);
    const auto num_held = static_cast<int64_t>(table.size());
    Released& range = released[g];
    range.end = std::min(FirstVisibleBlock(groups_[g], block_size, num_computed_tokens), num_held);
    range.begin = range.end;
    while (range.begin > 0 && !pool_.IsNullBlock(table[range.begin - 1])) --range.begin;
    for (int64_t b = range.begin; b < range.end; ++b) {
      num_freed_by_window += pool_.ref_count(table[b]) == 1 ? 1 : 0;
    }
    num_free_hits += std::count_if(hit.begin(), hit.end(), [this](int32_t id) {
      return !pool_.IsNullBlock(id) && pool_.ref_count(id) == 0;
    });
    num_fresh += num_table_blocks - num_held - static_cast<int64_t>(hit.size());
  }
  if (num_fresh + num_free_hits > pool_.num_free_blocks() + num_freed_by_window) {
    if (inserted) requests_.erase(it);
    return std::nullopt;
  }

  // Release the window's blocks (tail first) and take the hit's before allocating: released
  // blocks count as free, and a free hit block must leave the free queue before it is popped.
  for (size_t g = 0; g < groups_.size(); ++g) {
    std::vector<int32_t>& table = request.tables[g];
    std::vector<int32_t> tail_first;
    for (int64_t b = released[g].end - 1; b >= released[g].begin; --b) {
      tail_first.push_back(std::exchange(table[b], kNullBlockId));
    }
    pool_.Free(tail_first);
    const std::span<const int32_t> hit = hit_of(g);
    table.insert(table.end(), hit.begin(), hit.end());
    pool_.Touch(hit);  // skips the null entries
  }
  const std::vector<int32_t> fresh = pool_.Allocate(static_cast<int32_t>(num_fresh));
  auto next_fresh = fresh.begin();
  for (std::vector<int32_t>& table : request.tables) {
    const int64_t count = num_table_blocks - static_cast<int64_t>(table.size());
    table.insert(table.end(), next_fresh, next_fresh + count);
    next_fresh += count;
  }
  return BlockTables(request.tables);
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
      std::min<int64_t>(num_computed_tokens / block_size, request.tables.front().size());
  for (int64_t b = static_cast<int64_t>(request.block_hashes.size()); b < num_full_blocks; ++b) {
    auto block_tokens = token_ids.subspan(b * block_size, block_size);
    BlockHash parent = b == 0 ? 0 : request.block_hashes[b - 1];
    BlockHash hash = HashBlockTokens(parent, block_tokens, extras);
    request.block_hashes.push_back(hash);
    // The pool skips null entries (blocks a sliding window never held or already released).
    for (size_t g = 0; g < groups_.size(); ++g) {
      pool_.Cache(request.tables[g][b], hash, block_tokens, static_cast<int32_t>(g));
    }
  }
}

void KvCacheManager::Free(const std::string& request_id) {
  auto it = requests_.find(request_id);
  if (it == requests_.end()) return;
  for (const std::vector<int32_t>& table : it->second.tables) {
    std::vector<int32_t> tail_first(table.rbegin(), table.rend());
    pool_.Free(tail_first);  // the pool skips null entries
  }
  requests_.erase(it);
}

KvCacheManager::BlockTables KvCacheManager::block_tables(const std::string& request_id) const {
  auto it = requests_.find(request_id);
  if (it == requests_.end()) return {};
  return it->second.tables;
}

std::span<const int32_t> KvCacheManager::block_ids(const std::string& request_id,
                                                   int32_t group) const {
  BlockTables tables = block_tables(request_id);
  if (tables.empty()) return {};
  return tables[group];
}

int64_t KvCacheManager::num_held_blocks(const std::string& request_id) const {
  int64_t count = 0;
  for (const std::vector<int32_t>& table : block_tables(request_id)) {
    count += std::count_if(table.begin(), table.end(),
                           [this](int32_t id) { return !pool_.IsNullBlock(id); });
  }
  return count;
}

}  // namespace vllm
