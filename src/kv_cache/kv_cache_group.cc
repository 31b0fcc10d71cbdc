#include "kv_cache/kv_cache_group.h"

#include <algorithm>

namespace vllm {
namespace {

// Full attention needs every block before n, so its hits are prefix-closed: the run of cached
// blocks from block 0.
std::vector<int32_t> FullAttentionHit(int32_t group, int64_t max_blocks,
                                      const CachedBlockLookup& lookup) {
  std::vector<int32_t> table;
  for (int64_t b = 0; b < max_blocks; ++b) {
    std::optional<int32_t> block_id = lookup(group, b);
    if (!block_id) break;
    table.push_back(*block_id);
  }
  return table;
}

// The largest n <= max_blocks whose visible blocks [FirstVisibleBlock(n), n) are all cached,
// scanning right to left as vLLM's SlidingWindowManager does. Blocks [start, end) are known to be
// cached and `end` is the candidate n:
//   - start <= FirstVisibleBlock(end): every block `end` sees is cached, a hit.
//   - block start - 1 cached: the run grows leftwards.
//   - block start - 1 missing: every n in (start - 1, end] sees it (FirstVisibleBlock(n) <=
//     FirstVisibleBlock(end) < start), so the next candidate is n = start - 1, with an empty run.
// Larger candidates were ruled out the same way, so the first hit found is the longest.
std::vector<int32_t> SlidingWindowHit(const KvCacheGroupSpec& spec, int64_t block_size,
                                      int32_t group, int64_t max_blocks, int32_t null_block,
                                      const CachedBlockLookup& lookup) {
  std::vector<int32_t> table(max_blocks, null_block);
  int64_t start = max_blocks;
  int64_t end = max_blocks;
  while (start > FirstVisibleBlock(spec, block_size, end * block_size)) {
    const int64_t b = start - 1;
    if (std::optional<int32_t> block_id = lookup(group, b)) {
      table[b] = *block_id;
      start = b;
    } else {
      start = end = b;
    }
  }
  table.resize(end);  // entries before `start` were never written: null
  return table;
}

}  // namespace

int64_t FirstVisibleBlock(const KvCacheGroupSpec& spec, int64_t block_size, int64_t position) {
  if (!spec.is_sliding()) return 0;
  return std::max<int64_t>(0, position - spec.sliding_window + 1) / block_size;
}

std::vector<std::vector<int32_t>> FindLongestCacheHit(std::span<const KvCacheGroupSpec> groups,
                                                      int64_t block_size, int64_t max_blocks,
                                                      int32_t null_block,
                                                      const CachedBlockLookup& lookup) {
  const auto num_groups = static_cast<int32_t>(groups.size());
  std::vector<std::vector<int32_t>> tables(num_groups);
  int64_t num_hit_blocks = max_blocks;
  // Full groups are searched once: their hits are prefix-closed, so truncating one to a shorter
  // length (done at the end) gives that length's hit.
  for (int32_t g = 0; g < num_groups; ++g) {
    if (groups[g].is_sliding()) continue;
    tables[g] = FullAttentionHit(g, num_hit_blocks, lookup);
    num_hit_blocks = static_cast<int64_t>(tables[g].size());
  }
  // A sliding hit of n blocks says nothing about shorter lengths, so a sliding group is searched
  // again whenever another group has cut the length below its result, until all groups agree
  // (vLLM's HybridKVCacheCoordinator). The length only decreases, so this ends; each search
  // returns the longest hit up to the bound, so the agreed length is the longest for all groups.
  auto unsettled = [&] {
    for (int32_t g = 0; g < num_groups; ++g) {
      if (groups[g].is_sliding() && static_cast<int64_t>(tables[g].size()) != num_hit_blocks) {
        return g;
      }
    }
    return num_groups;
  };
  for (int32_t g = unsettled(); g < num_groups; g = unsettled()) {
    tables[g] = SlidingWindowHit(groups[g], block_size, g, num_hit_blocks, null_block, lookup);
    num_hit_blocks = static_cast<int64_t>(tables[g].size());
  }
  for (int32_t g = 0; g < num_groups; ++g) {
    if (!groups[g].is_sliding()) tables[g].resize(num_hit_blocks);
  }
  return tables;
}

}  // namespace vllm
