#include "kv_cache/kv_cache_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

namespace vllm {
namespace {

using ::testing::ElementsAre;

std::vector<int32_t> Iota(int count, int first = 0) {
  std::vector<int32_t> ids(count);
  std::iota(ids.begin(), ids.end(), first);
  return ids;
}

TEST(KvCacheManagerTest, AllocatesBlocksAsTokensGrow) {
  KvCacheManager manager({.num_blocks = 8, .block_size = 4});
  auto table = manager.AllocateSlots("a", 0, 6);
  ASSERT_TRUE(table.has_value());
  ASSERT_EQ(table->size(), 1u);  // one group
  EXPECT_EQ(table->front().size(), 2u);
  EXPECT_EQ(manager.AllocateSlots("a", 6, 2)->front().size(), 2u);  // 8 tokens still fit
  EXPECT_EQ(manager.AllocateSlots("a", 8, 1)->front().size(), 3u);
  EXPECT_EQ(manager.num_free_blocks(), 5);
}

TEST(KvCacheManagerTest, RefusesWhenFullAndChangesNothing) {
  KvCacheManager manager({.num_blocks = 3, .block_size = 4});
  ASSERT_TRUE(manager.AllocateSlots("a", 0, 8).has_value());
  EXPECT_FALSE(manager.AllocateSlots("b", 0, 8).has_value());
  EXPECT_EQ(manager.num_free_blocks(), 1);
  EXPECT_TRUE(manager.block_ids("b").empty());
}

TEST(KvCacheManagerTest, PrefixHitSkipsCachedBlocksButNotTheLastToken) {
  KvCacheManager manager({.num_blocks = 16, .block_size = 4});
  const BlockHashExtras extras;
  std::vector<int32_t> prompt = Iota(12);
  auto first = manager.GetComputedBlocks(prompt, extras);
  EXPECT_EQ(first.num_computed_tokens, 0);
  ASSERT_TRUE(manager.AllocateSlots("a", 0, 12).has_value());
  manager.CacheFullBlocks("a", prompt, 12, extras);

  // Same 12 tokens: only 2 blocks hit, since the hit must stop short of the last token.
  auto same = manager.GetComputedBlocks(prompt, extras);
  EXPECT_EQ(same.num_computed_tokens, 8);
  // A longer prompt sharing the 12-token prefix hits all 3 blocks.
  std::vector<int32_t> longer = Iota(14);
  auto hit = manager.GetComputedBlocks(longer, extras);
  EXPECT_EQ(hit.num_computed_tokens, 12);
  auto tables = manager.AllocateSlots("b", hit.num_computed_tokens, 2, hit);
  ASSERT_TRUE(tables.has_value());
  const std::vector<int32_t>& table = tables->front();
  EXPECT_EQ(table.size(), 4u);
  EXPECT_EQ(std::vector<int32_t>(table.begin(), table.begin() + 3),
            std::vector<int32_t>(manager.block_ids("a").begin(), manager.block_ids("a").end()));
  EXPECT_EQ(manager.stats().prefix_cache_queries, 12 + 12 + 14);
  EXPECT_EQ(manager.stats().prefix_cache_hits, 8 + 12);
}

TEST(KvCacheManagerTest, CacheSaltSeparatesPrefixes) {
  KvCacheManager manager({.num_blocks = 8, .block_size = 4});
  std::vector<int32_t> prompt = Iota(9);
  ASSERT_TRUE(manager.AllocateSlots("a", 0, 9).has_value());
  manager.CacheFullBlocks("a", prompt, 9, {.cache_salt = "alice"});
  EXPECT_EQ(manager.GetComputedBlocks(prompt, {.cache_salt = "alice"}).num_computed_tokens, 8);
  EXPECT_EQ(manager.GetComputedBlocks(prompt, {.cache_salt = "bob"}).num_computed_tokens, 0);
}

TEST(KvCacheManagerTest, FreedCachedBlocksStayReusableUntilEvictedTailFirst) {
  KvCacheManager manager({.num_blocks = 4, .block_size = 4});
  const BlockHashExtras extras;
  std::vector<int32_t> prompt = Iota(13);
  ASSERT_TRUE(manager.AllocateSlots("a", 0, 13).has_value());
  manager.CacheFullBlocks("a", prompt, 13, extras);
  manager.Free("a");
  EXPECT_EQ(manager.num_free_blocks(), 4);
  EXPECT_EQ(manager.GetComputedBlocks(prompt, extras).num_computed_tokens, 12);
  // Taking one block evicts the request's tail block first (the uncached 4th, then the 3rd).
  ASSERT_TRUE(manager.AllocateSlots("b", 0, 8).has_value());
  EXPECT_EQ(manager.GetComputedBlocks(prompt, extras).num_computed_tokens, 8);
}

TEST(KvCacheManagerTest, FreeReturnsEveryBlock) {
  KvCacheManager manager({.num_blocks = 10, .block_size = 4});
  ASSERT_TRUE(manager.AllocateSlots("a", 0, 17).has_value());
  ASSERT_TRUE(manager.AllocateSlots("b", 0, 3).has_value());
  manager.Free("a");
  manager.Free("b");
  EXPECT_EQ(manager.num_free_blocks(), 10);
  EXPECT_DOUBLE_EQ(manager.usage(), 0.0);
}

TEST(KvCacheManagerTest, PrefixCachingCanBeDisabled) {
  KvCacheManager manager({.num_blocks = 8, .block_size = 4, .enable_prefix_caching = false});
  std::vector<int32_t> prompt = Iota(9);
  ASSERT_TRUE(manager.AllocateSlots("a", 0, 9).has_value());
  manager.CacheFullBlocks("a", prompt, 9, {});
  EXPECT_EQ(manager.GetComputedBlocks(prompt, {}).num_computed_tokens, 0);
}

}  // namespace
}  // namespace vllm
