#include "kv_cache/kv_cache_group.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

namespace vllm {
namespace {

using ::testing::ElementsAre;

constexpr int32_t kNull = 0;

// Block b of group g is cached as block id 100 * (g + 1) + b when cached[g][b].
CachedBlockLookup LookupIn(const std::vector<std::vector<bool>>& cached) {
  return [&cached](int32_t group, int64_t block) -> std::optional<int32_t> {
    EXPECT_LT(block, static_cast<int64_t>(cached[group].size()));
    if (!cached[group][block]) return std::nullopt;
    return static_cast<int32_t>(100 * (group + 1) + block);
  };
}

TEST(KvCacheGroupTest, FirstVisibleBlockIsTheBlockOfTheWindowStart) {
  const KvCacheGroupSpec full;
  const KvCacheGroupSpec window6{.sliding_window = 6};
  EXPECT_EQ(FirstVisibleBlock(full, 4, 1000), 0);
  // Position 13 sees [8, 13]; position 12 sees [7, 12], so block 1 (positions 4..7) too.
  EXPECT_EQ(FirstVisibleBlock(window6, 4, 13), 2);
  EXPECT_EQ(FirstVisibleBlock(window6, 4, 12), 1);
  EXPECT_EQ(FirstVisibleBlock(window6, 4, 5), 0);                 // sees [0, 5]
  EXPECT_EQ(FirstVisibleBlock(window6, 4, 3), 0);                 // window wider than the sequence
  EXPECT_EQ(FirstVisibleBlock({.sliding_window = 1}, 4, 13), 3);  // sees itself only
}

TEST(KvCacheGroupTest, SlidingHitSkipsMissesOutsideTheWindow) {
  // W = 8, block size 4: a hit of n blocks needs blocks n - 2 and n - 1 (positions [4n-7, 4n-1]).
  const std::vector<KvCacheGroupSpec> groups = {{.sliding_window = 8}};
  const std::vector<std::vector<bool>> cached = {{true, true, false, true, true, false, true}};
  auto tables = FindLongestCacheHit(groups, 4, 7, kNull, LookupIn(cached));
  // n = 7 and n = 6 need block 5; n = 5 needs blocks 3 and 4, both cached.
  EXPECT_THAT(tables, ElementsAre(ElementsAre(kNull, kNull, kNull, 103, 104)));
}

TEST(KvCacheGroupTest, FullGroupBoundsTheSlidingGroup) {
  const std::vector<KvCacheGroupSpec> groups = {{}, {.sliding_window = 8}};
  const std::vector<std::vector<bool>> cached = {{true, true, true, false, true},
                                                 {false, true, true, true, true}};
  auto tables = FindLongestCacheHit(groups, 4, 5, kNull, LookupIn(cached));
  // Full: 3 blocks. Sliding at 3 needs blocks 1 and 2: cached, so block 0's miss does not matter.
  EXPECT_THAT(tables, ElementsAre(ElementsAre(100, 101, 102), ElementsAre(kNull, 201, 202)));
}

TEST(KvCacheGroupTest, SlidingGroupsAreSearchedAgainUntilTheyAgree) {
  // Block size 4. Group 0 (W = 5) needs block n - 1; group 1 (W = 9) needs n - 2 and n - 1.
  const std::vector<KvCacheGroupSpec> groups = {{.sliding_window = 5}, {.sliding_window = 9}};
  const std::vector<std::vector<bool>> cached = {
      {true, true, true, true, false, true, true, false},
      {true, true, true, true, true, false, false, false}};
  // Group 0 alone: 7. Group 1 within 7: 5. Group 0 within 5 (needs block 4): 4. Group 1: 4.
  auto tables = FindLongestCacheHit(groups, 4, 8, kNull, LookupIn(cached));
  EXPECT_THAT(tables, ElementsAre(ElementsAre(kNull, kNull, kNull, 103),
                                  ElementsAre(kNull, kNull, 202, 203)));
}

TEST(KvCacheGroupTest, NothingCachedIsAnEmptyHit) {
  const std::vector<KvCacheGroupSpec> groups = {{}, {.sliding_window = 3}};
  const std::vector<std::vector<bool>> cached = {{false, false, false}, {false, false, false}};
  auto tables = FindLongestCacheHit(groups, 2, 3, kNull, LookupIn(cached));
  EXPECT_THAT(tables, ElementsAre(ElementsAre(), ElementsAre()));
}

// The definition, by brute force: the largest n whose visible blocks are cached in every group.
std::vector<std::vector<int32_t>> ReferenceHit(std::span<const KvCacheGroupSpec> groups,
                                               int64_t block_size, int64_t max_blocks,
                                               const std::vector<std::vector<bool>>& cached) {
  for (int64_t n = max_blocks;; --n) {
    bool served = true;
    for (size_t g = 0; g < groups.size(); ++g) {
      for (int64_t b = FirstVisibleBlock(groups[g], block_size, n * block_size); b < n; ++b) {
        served = served && cached[g][b];
      }
    }
    if (!served) continue;
    std::vector<std::vector<int32_t>> tables(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) {
      const int64_t first = FirstVisibleBlock(groups[g], block_size, n * block_size);
      for (int64_t b = 0; b < n; ++b) {
        tables[g].push_back(b < first ? kNull : static_cast<int32_t>(100 * (g + 1) + b));
      }
    }
    return tables;
  }
}

TEST(KvCacheGroupTest, MatchesTheDefinitionOnRandomCaches) {
  std::mt19937 rng(7);
  const std::vector<int64_t> windows = {0, 0, 1, 2, 3, 4, 5, 7, 8, 13, 33};
  const std::vector<int64_t> block_sizes = {1, 2, 4, 16};
  const std::vector<double> densities = {0.5, 0.8, 0.95};
  for (int trial = 0; trial < 3000; ++trial) {
    const int64_t block_size = block_sizes[rng() % block_sizes.size()];
    const int64_t max_blocks = rng() % 13;
    std::bernoulli_distribution is_cached(densities[rng() % densities.size()]);
    std::vector<KvCacheGroupSpec> groups(1 + rng() % 3);
    std::vector<std::vector<bool>> cached(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) {
      groups[g].sliding_window = windows[rng() % windows.size()];
      for (int64_t b = 0; b < max_blocks; ++b) cached[g].push_back(is_cached(rng));
    }
    ASSERT_EQ(FindLongestCacheHit(groups, block_size, max_blocks, kNull, LookupIn(cached)),
              ReferenceHit(groups, block_size, max_blocks, cached))
        << "trial " << trial;
  }
}

}  // namespace
}  // namespace vllm
