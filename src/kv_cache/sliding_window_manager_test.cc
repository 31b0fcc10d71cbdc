// KvCacheManager with sliding-window KV cache groups (kv_cache_group.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "kv_cache/kv_cache_manager.h"

namespace vllm {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using Tables = std::vector<std::vector<int32_t>>;

constexpr int32_t kNull = KvCacheManager::kNullBlockId;
const KvCacheManager::ComputedBlocks kNoHit;

std::vector<int32_t> Iota(int64_t count, int32_t first = 0) {
  std::vector<int32_t> ids(count);
  std::iota(ids.begin(), ids.end(), first);
  return ids;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// By brute force: the blocks holding a position that one of the tokens
// [num_computed, num_computed + num_new) attends to under a window of `window` positions.
std::set<int64_t> VisibleBlocks(int64_t window, int64_t block_size, int64_t num_computed,
                                int64_t num_new) {
  std::set<int64_t> blocks;
  for (int64_t q = num_computed; q < num_computed + num_new; ++q) {
    for (int64_t p = std::max<int64_t>(0, q - window + 1); p <= q; ++p) {
      blocks.insert(p / block_size);
    }
  }
  return blocks;
}

Tables Copy(KvCacheManager::BlockTables tables) { return Tables(tables.begin(), tables.end()); }

TEST(SlidingWindowManagerTest, LongRequestHoldsEveryFullBlockButOnlyTheWindow) {
  constexpr int64_t kBlockSize = 16;
  constexpr int64_t kWindow = 64;
  constexpr int64_t kPromptLen = 16000;
  constexpr int64_t kChunk = 512;
  constexpr int64_t kDecodeSteps = 100;
  constexpr int32_t kNumBlocks = 1100;
  KvCacheManager manager({.num_blocks = kNumBlocks,
                          .block_size = kBlockSize,
                          .groups = {{}, {.sliding_window = kWindow}}});
  EXPECT_EQ(manager.num_groups(), 2);
  EXPECT_FALSE(manager.group(0).is_sliding());
  EXPECT_EQ(manager.group(1).sliding_window, kWindow);
  EXPECT_EQ(manager.num_free_blocks(), kNumBlocks - 1);  // block 0 is the null block
  const std::vector<int32_t> tokens = Iota(kPromptLen + kDecodeSteps);
  const BlockHashExtras extras;

  auto step = [&](int64_t num_computed, int64_t num_new) {
    SCOPED_TRACE("num_computed " + std::to_string(num_computed));
    auto tables = manager.AllocateSlots("a", num_computed, num_new, kNoHit);
    ASSERT_TRUE(tables.has_value());
    ASSERT_EQ(tables->size(), 2u);
    const std::vector<int32_t>& full = (*tables)[0];
    const std::vector<int32_t>& sliding = (*tables)[1];
    const int64_t num_table_blocks = CeilDiv(num_computed + num_new, kBlockSize);
    ASSERT_EQ(static_cast<int64_t>(full.size()), num_table_blocks);
    ASSERT_EQ(static_cast<int64_t>(sliding.size()), num_table_blocks);
    const std::set<int64_t> visible = VisibleBlocks(kWindow, kBlockSize, num_computed, num_new);
    // Block 0 appears only as the null entries of the sliding table, exactly outside the window.
    std::set<int32_t> held;
    int64_t num_wrong = 0;
    for (int64_t b = 0; b < num_table_blocks; ++b) {
      num_wrong += full[b] == kNull ? 1 : 0;
      num_wrong += (sliding[b] != kNull) != (visible.count(b) == 1) ? 1 : 0;
      held.insert(full[b]);
      if (sliding[b] != kNull) held.insert(sliding[b]);
    }
    EXPECT_EQ(num_wrong, 0);
    // No block is held twice, and the pool's free count is exact.
    EXPECT_EQ(held.size(), full.size() + visible.size());
    EXPECT_EQ(manager.num_held_blocks("a"), static_cast<int64_t>(held.size()));
    EXPECT_EQ(manager.num_free_blocks(), kNumBlocks - 1 - static_cast<int64_t>(held.size()));
    if (num_new == 1) {
      EXPECT_LE(static_cast<int64_t>(visible.size()), CeilDiv(kWindow, kBlockSize) + 1);
    }
    manager.CacheFullBlocks("a", tokens, num_computed + num_new, extras);
  };
  for (int64_t computed = 0; computed < kPromptLen; computed += kChunk) {
    step(computed, std::min(kChunk, kPromptLen - computed));
  }
  for (int64_t computed = kPromptLen; computed < kPromptLen + kDecodeSteps; ++computed) {
    step(computed, 1);
  }

  manager.Free("a");
  EXPECT_EQ(manager.num_free_blocks(), kNumBlocks - 1);
  EXPECT_DOUBLE_EQ(manager.usage(), 0.0);
  EXPECT_EQ(manager.num_held_blocks("a"), 0);
  // The last window's blocks were freed last and are still cached: the whole sequence hits.
  auto hit = manager.GetComputedBlocks(tokens, extras);
  const int64_t num_hit_blocks = (kPromptLen + kDecodeSteps - 1) / kBlockSize;
  EXPECT_EQ(hit.num_computed_tokens, num_hit_blocks * kBlockSize);
  const int64_t first_visible = (num_hit_blocks * kBlockSize - kWindow + 1) / kBlockSize;
  ASSERT_EQ(static_cast<int64_t>(hit.group_block_ids[1].size()), num_hit_blocks);
  for (int64_t b = 0; b < num_hit_blocks; ++b) {
    EXPECT_EQ(hit.group_block_ids[1][b] == kNull, b < first_visible) << b;
  }
  EXPECT_TRUE(manager.ResetPrefixCache());
}

TEST(SlidingWindowManagerTest, RefusalChangesNothingAndTheWindowsBlocksCount) {
  // Block size 4, W = 8: 12 usable blocks.
  KvCacheManager manager(
      {.num_blocks = 13, .block_size = 4, .groups = {{}, {.sliding_window = 8}}});
  ASSERT_TRUE(manager.AllocateSlots("a", 0, 16, kNoHit).has_value());
  EXPECT_EQ(manager.num_free_blocks(), 4);
  const Tables before = Copy(manager.block_tables("a"));

  // Position 16 sees [9, 16]: sliding blocks 0 and 1 would be released (2 blocks), but 32 tokens
  // need 4 + 4 new blocks > 4 free + 2 released.
  EXPECT_FALSE(manager.AllocateSlots("a", 16, 16, kNoHit).has_value());
  EXPECT_EQ(Copy(manager.block_tables("a")), before);
  EXPECT_EQ(manager.num_free_blocks(), 4);
  EXPECT_EQ(manager.num_held_blocks("a"), 8);

  // 28 tokens need 3 + 3 new blocks: 4 free + the 2 the window releases.
  auto tables = manager.AllocateSlots("a", 16, 12, kNoHit);
  ASSERT_TRUE(tables.has_value());
  EXPECT_EQ(manager.num_free_blocks(), 0);
  const Tables after = Copy(*tables);
  EXPECT_EQ(std::vector<int32_t>(after[0].begin(), after[0].begin() + 4), before[0]);
  EXPECT_EQ(after[1][0], kNull);
  EXPECT_EQ(after[1][1], kNull);
  EXPECT_EQ(after[1][2], before[1][2]);
  EXPECT_EQ(after[1][3], before[1][3]);
  std::set<int32_t> held;
  for (const auto& table : after) {
    for (int32_t id : table) {
      if (id != kNull) held.insert(id);
    }
  }
  EXPECT_EQ(held.size(), 12u);  // 7 full + 5 sliding, the released blocks reused

  // A new request gets nothing and leaves no entry.
  EXPECT_FALSE(manager.AllocateSlots("b", 0, 1, kNoHit).has_value());
  EXPECT_TRUE(manager.block_tables("b").empty());
  EXPECT_EQ(manager.num_free_blocks(), 0);
  manager.Free("a");
  EXPECT_EQ(manager.num_free_blocks(), 12);
}

TEST(SlidingWindowManagerTest, PrefixHitHoldsTheWindowAndNullsBeforeIt) {
  constexpr int64_t kBlockSize = 16;
  KvCacheManager manager(
      {.num_blocks = 100, .block_size = kBlockSize, .groups = {{}, {.sliding_window = 64}}});
  const BlockHashExtras extras;
  const std::vector<int32_t> prompt_a = Iota(300);
  ASSERT_TRUE(manager.AllocateSlots("a", 0, 300, kNoHit).has_value());
  manager.CacheFullBlocks("a", prompt_a, 300, extras);
  const Tables a = Copy(manager.block_tables("a"));
  EXPECT_EQ(manager.num_free_blocks(), 99 - 2 * 19);

  // 18 blocks are cached in both groups. A hit of 288 tokens: position 288 sees [225, 288], so
  // the sliding table holds A's blocks 14..17 and nulls before.
  std::vector<int32_t> prompt_b = Iota(320);
  auto hit = manager.GetComputedBlocks(prompt_b, extras);
  EXPECT_EQ(hit.num_computed_tokens, 288);
  ASSERT_EQ(hit.group_block_ids.size(), 2u);
  EXPECT_THAT(hit.group_block_ids[0], ElementsAreArray(a[0].begin(), a[0].begin() + 18));
  std::vector<int32_t> expected_sliding(14, kNull);
  expected_sliding.insert(expected_sliding.end(), a[1].begin() + 14, a[1].begin() + 18);
  EXPECT_EQ(hit.group_block_ids[1], expected_sliding);
  // The same 300 tokens stop one short of the end: the same 18 blocks.
  EXPECT_EQ(manager.GetComputedBlocks(prompt_a, extras).group_block_ids, hit.group_block_ids);
  EXPECT_EQ(manager.stats().prefix_cache_queries, 320 + 300);
  EXPECT_EQ(manager.stats().prefix_cache_hits, 288 + 288);

  auto tables = manager.AllocateSlots("b", hit.num_computed_tokens, 32, hit);
  ASSERT_TRUE(tables.has_value());
  const Tables b = Copy(*tables);
  EXPECT_EQ(std::vector<int32_t>(b[1].begin(), b[1].begin() + 18), expected_sliding);
  EXPECT_NE(b[1][18], kNull);
  EXPECT_NE(b[1][19], kNull);
  EXPECT_EQ(manager.num_held_blocks("b"), 20 + 6);
  EXPECT_EQ(manager.num_free_blocks(), 99 - 38 - 4);  // the hit blocks are shared with A
  manager.Free("a");
  EXPECT_EQ(manager.num_free_blocks(), 99 - 26);
  manager.Free("b");
  EXPECT_EQ(manager.num_free_blocks(), 99);
}

TEST(SlidingWindowManagerTest, EvictedWindowBlocksShortenTheHit) {
  // Block size 4, W = 8: a hit of n blocks needs sliding blocks n - 2 and n - 1. 20 usable
  // blocks, exactly what request A uses over its life.
  KvCacheManager manager(
      {.num_blocks = 21, .block_size = 4, .groups = {{}, {.sliding_window = 8}}});
  const BlockHashExtras extras;
  const std::vector<int32_t> prompt_a = Iota(40);
  // A runs in chunks of 8 tokens. Position c sees [c - 7, c], so the chunks at 16, 24, 32
  // release sliding blocks {1, 0}, {3, 2}, {5, 4} (tail first); they stay cached and free.
  std::vector<int32_t> sliding_a(10, kNull);  // A's sliding block ids, released ones included
  for (int64_t computed = 0; computed < 40; computed += 8) {
    auto tables = manager.AllocateSlots("a", computed, 8, kNoHit);
    ASSERT_TRUE(tables.has_value());
    for (size_t b = 0; b < (*tables)[1].size(); ++b) {
      if ((*tables)[1][b] != kNull) sliding_a[b] = (*tables)[1][b];
    }
    manager.CacheFullBlocks("a", prompt_a, computed + 8, extras);
  }
  const std::vector<int32_t> full_a(manager.block_ids("a", 0).begin(),
                                    manager.block_ids("a", 0).end());
  EXPECT_THAT(manager.block_ids("a", 1).subspan(0, 6),
              ElementsAre(kNull, kNull, kNull, kNull, kNull, kNull));
  EXPECT_EQ(manager.num_free_blocks(), 6);  // the free queue: sliding 1, 0, 3, 2, 5, 4

  // D shares 8 tokens: it takes sliding blocks 0 and 1 off the free queue, and its two new blocks
  // evict sliding blocks 3 and 2, the least recently freed.
  std::vector<int32_t> prompt_d = Iota(8);
  prompt_d.push_back(999);
  auto hit_d = manager.GetComputedBlocks(prompt_d, extras);
  EXPECT_EQ(hit_d.group_block_ids, Tables({{full_a[0], full_a[1]}, {sliding_a[0], sliding_a[1]}}));
  auto tables_d = manager.AllocateSlots("d", 8, 1, hit_d);
  ASSERT_TRUE(tables_d.has_value());
  EXPECT_EQ(Copy(*tables_d), Tables({{full_a[0], full_a[1], sliding_a[3]},
                                     {sliding_a[0], sliding_a[1], sliding_a[2]}}));

  // B shares 24 tokens: the full group hits 6 blocks, the window at 24 needs sliding blocks 4
  // and 5, still cached: evicting blocks before the window does not shorten the hit.
  std::vector<int32_t> prompt_b = Iota(24);
  for (int32_t t = 0; t < 6; ++t) prompt_b.push_back(1000 + t);
  auto hit_b = manager.GetComputedBlocks(prompt_b, extras);
  EXPECT_EQ(hit_b.num_computed_tokens, 24);
  EXPECT_EQ(hit_b.group_block_ids[1],
            std::vector<int32_t>({kNull, kNull, kNull, kNull, sliding_a[4], sliding_a[5]}));

  // C's two new blocks evict sliding blocks 5 and 4. B's hit now ends at 8 tokens: lengths 6..3
  // each need an evicted block, length 2 needs blocks 0 and 1, which D holds.
  auto tables_c = manager.AllocateSlots("c", 0, 1, kNoHit);
  ASSERT_TRUE(tables_c.has_value());
  EXPECT_EQ(Copy(*tables_c), Tables({{sliding_a[5]}, {sliding_a[4]}}));
  hit_b = manager.GetComputedBlocks(prompt_b, extras);
  EXPECT_EQ(hit_b.num_computed_tokens, 8);
  EXPECT_EQ(hit_b.group_block_ids, Tables({{full_a[0], full_a[1]}, {sliding_a[0], sliding_a[1]}}));
}

TEST(SlidingWindowManagerTest, WindowThatIsNotAMultipleOfTheBlockSize) {
  // Block size 4, W = 6: position p sees [p - 5, p], up to 3 blocks.
  constexpr int64_t kWindow = 6;
  KvCacheManager manager(
      {.num_blocks = 32, .block_size = 4, .groups = {{}, {.sliding_window = kWindow}}});
  const BlockHashExtras extras;
  const std::vector<int32_t> prompt = Iota(24);
  for (int64_t computed = 0; computed < 24; ++computed) {
    auto tables = manager.AllocateSlots("a", computed, 1, kNoHit);
    ASSERT_TRUE(tables.has_value());
    const std::set<int64_t> visible = VisibleBlocks(kWindow, 4, computed, 1);
    for (int64_t b = 0; b < static_cast<int64_t>((*tables)[1].size()); ++b) {
      EXPECT_EQ((*tables)[1][b] != kNull, visible.count(b) == 1) << computed << " " << b;
    }
    manager.CacheFullBlocks("a", prompt, computed + 1, extras);
  }
  const std::vector<int32_t> sliding_a(manager.block_ids("a", 1).begin(),
                                       manager.block_ids("a", 1).end());
  EXPECT_THAT(sliding_a,
              ElementsAre(kNull, kNull, kNull, kNull, testing::Ne(kNull), testing::Ne(kNull)));

  // A 22-token prompt hits 20 tokens: position 20 sees [15, 20], so block 3 (positions 12..15,
  // released by A and still cached) is needed besides block 4; block 2 is not.
  auto hit = manager.GetComputedBlocks(Iota(22), extras);
  EXPECT_EQ(hit.num_computed_tokens, 20);
  EXPECT_EQ(hit.group_block_ids[1][2], kNull);
  EXPECT_NE(hit.group_block_ids[1][3], kNull);
  EXPECT_EQ(hit.group_block_ids[1][4], sliding_a[4]);
  ASSERT_TRUE(manager.AllocateSlots("b", 20, 2, hit).has_value());
  EXPECT_EQ(manager.num_held_blocks("b"), 6 + 3);
}

TEST(SlidingWindowManagerTest, WindowWiderThanTheSequenceBehavesAsFullAttention) {
  KvCacheManager manager(
      {.num_blocks = 64, .block_size = 4, .groups = {{}, {.sliding_window = 1000}}});
  const BlockHashExtras extras;
  const std::vector<int32_t> prompt = Iota(40);
  for (int64_t computed = 0; computed < 40; computed += 8) {
    auto tables = manager.AllocateSlots("a", computed, 8, kNoHit);
    ASSERT_TRUE(tables.has_value());
    EXPECT_THAT((*tables)[1], testing::Each(testing::Ne(kNull)));
    manager.CacheFullBlocks("a", prompt, computed + 8, extras);
  }
  EXPECT_EQ(manager.num_held_blocks("a"), 20);
  manager.Free("a");
  auto hit = manager.GetComputedBlocks(Iota(41), extras);
  EXPECT_EQ(hit.num_computed_tokens, 40);
  EXPECT_THAT(hit.group_block_ids[1], testing::Each(testing::Ne(kNull)));
}

TEST(SlidingWindowManagerTest, AllLayersSlidingIsOneSlidingGroup) {
  // Mistral: one sliding group (W = 8, block size 4).
  KvCacheManager manager({.num_blocks = 9, .block_size = 4, .groups = {{.sliding_window = 8}}});
  EXPECT_EQ(manager.num_free_blocks(), 8);
  const BlockHashExtras extras;
  const std::vector<int32_t> prompt = Iota(60);
  ASSERT_TRUE(manager.AllocateSlots("a", 0, 8).has_value());
  manager.CacheFullBlocks("a", prompt, 8, extras);
  for (int64_t computed = 8; computed < 60; ++computed) {
    auto tables = manager.AllocateSlots("a", computed, 1);
    ASSERT_TRUE(tables.has_value());
    EXPECT_EQ(static_cast<int64_t>(tables->front().size()), CeilDiv(computed + 1, 4));
    EXPECT_LE(manager.num_held_blocks("a"), 3);
    EXPECT_EQ(manager.num_free_blocks(), 8 - manager.num_held_blocks("a"));
    manager.CacheFullBlocks("a", prompt, computed + 1, extras);
  }
  // A holds blocks 13 and 14 (position 59 sees [52, 59]); block 12 is released but cached.
  EXPECT_EQ(manager.block_ids("a")[12], kNull);
  // Position 56 sees [49, 56]: blocks 12 and 13.
  auto hit = manager.GetComputedBlocks(Iota(57), extras);
  EXPECT_EQ(hit.num_computed_tokens, 56);
  const std::vector<int32_t>& hit_ids = hit.group_block_ids[0];
  ASSERT_EQ(hit_ids.size(), 14u);
  EXPECT_EQ(hit_ids[11], kNull);
  EXPECT_NE(hit_ids[12], kNull);
  EXPECT_EQ(hit_ids[13], manager.block_ids("a")[13]);
  auto tables = manager.AllocateSlots("b", 56, 1, hit);
  ASSERT_TRUE(tables.has_value());
  EXPECT_EQ(std::vector<int32_t>(tables->front().begin(), tables->front().begin() + 14), hit_ids);
  manager.Free("a");
  manager.Free("b");
  EXPECT_EQ(manager.num_free_blocks(), 8);
}

TEST(SlidingWindowManagerTest, SharedBlocksLeavingTheWindowAreNotCountedAsFree) {
  // One sliding group, W = 8, block size 4: position p sees [p - 7, p]. 5 usable blocks.
  KvCacheManager manager({.num_blocks = 6, .block_size = 4, .groups = {{.sliding_window = 8}}});
  const BlockHashExtras extras;
  const std::vector<int32_t> prompt = Iota(32);
  ASSERT_TRUE(manager.AllocateSlots("a", 0, 16).has_value());
  manager.CacheFullBlocks("a", prompt, 16, extras);
  // B's hit of 16 tokens shares A's blocks 2 and 3.
  auto hit = manager.GetComputedBlocks(Iota(17), extras);
  ASSERT_EQ(hit.num_computed_tokens, 16);
  ASSERT_TRUE(manager.AllocateSlots("b", 16, 1, hit).has_value());
  // A at 16 releases its blocks 0 and 1, which pay for its 2 new blocks.
  ASSERT_TRUE(manager.AllocateSlots("a", 16, 8).has_value());
  EXPECT_EQ(manager.num_free_blocks(), 0);
  // A at 24 releases blocks 2 and 3, but B still holds them: nothing to pay for a new block.
  const std::vector<int32_t> before(manager.block_ids("a").begin(), manager.block_ids("a").end());
  EXPECT_FALSE(manager.AllocateSlots("a", 24, 1).has_value());
  EXPECT_EQ(std::vector<int32_t>(manager.block_ids("a").begin(), manager.block_ids("a").end()),
            before);
  manager.Free("b");
  EXPECT_EQ(manager.num_free_blocks(), 1);
  ASSERT_TRUE(manager.AllocateSlots("a", 24, 1).has_value());
  EXPECT_EQ(manager.num_held_blocks("a"), 3);
  EXPECT_EQ(manager.num_free_blocks(), 2);
}

TEST(SlidingWindowManagerTest, FreeHitBlocksCountAgainstTheFreeBlocks) {
  // One sliding group, W = 8, block size 4; 4 usable blocks.
  KvCacheManager manager({.num_blocks = 5, .block_size = 4, .groups = {{.sliding_window = 8}}});
  const BlockHashExtras extras;
  ASSERT_TRUE(manager.AllocateSlots("a", 0, 16).has_value());
  manager.CacheFullBlocks("a", Iota(16), 16, extras);
  const std::vector<int32_t> a(manager.block_ids("a").begin(), manager.block_ids("a").end());
  manager.Free("a");
  // B's hit takes A's free blocks 2 and 3 off the free queue: with 3 new blocks that is 5 > 4.
  auto hit = manager.GetComputedBlocks(Iota(25), extras);
  ASSERT_EQ(hit.group_block_ids, Tables({{kNull, kNull, a[2], a[3]}}));
  EXPECT_FALSE(manager.AllocateSlots("b", 16, 9, hit).has_value());
  EXPECT_EQ(manager.num_free_blocks(), 4);
  EXPECT_TRUE(manager.block_tables("b").empty());
  // With 2 new blocks it fits exactly, the new blocks evicting A's blocks 1 and 0.
  auto tables = manager.AllocateSlots("b", 16, 5, hit);
  ASSERT_TRUE(tables.has_value());
  EXPECT_EQ(Copy(*tables), Tables({{kNull, kNull, a[2], a[3], a[1], a[0]}}));
  EXPECT_EQ(manager.num_free_blocks(), 0);
}

}  // namespace
}  // namespace vllm
