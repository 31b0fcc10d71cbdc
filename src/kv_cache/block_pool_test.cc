#include "kv_cache/block_pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vllm {
namespace {

using ::testing::ElementsAre;

TEST(BlockPoolTest, AllocateAndFreeCountReferences) {
  BlockPool pool({.num_blocks = 4, .block_size = 2});
  auto blocks = pool.Allocate(3);
  EXPECT_THAT(blocks, ElementsAre(0, 1, 2));
  EXPECT_EQ(pool.num_free_blocks(), 1);
  EXPECT_DOUBLE_EQ(pool.usage(), 0.75);
  pool.Touch(std::vector<int32_t>{1});
  pool.Free(blocks);
  EXPECT_EQ(pool.ref_count(1), 1);
  EXPECT_EQ(pool.num_free_blocks(), 3);
  pool.Free(std::vector<int32_t>{1});
  EXPECT_EQ(pool.num_free_blocks(), 4);
}

TEST(BlockPoolTest, EvictsLeastRecentlyFreedFirst) {
  BlockPool pool({.num_blocks = 3, .block_size = 2});
  auto blocks = pool.Allocate(3);
  const std::vector<int32_t> tokens = {5, 6};
  pool.Cache(blocks[0], 100, tokens);
  pool.Cache(blocks[1], 200, tokens);
  // Freed in the order 2, 0, 1: block 2 is reused first, then 0 (evicting hash 100).
  pool.Free(std::vector<int32_t>{2, 0, 1});
  EXPECT_THAT(pool.Allocate(1), ElementsAre(2));
  EXPECT_TRUE(pool.FindCached(100, tokens).has_value());
  EXPECT_THAT(pool.Allocate(1), ElementsAre(0));
  EXPECT_FALSE(pool.FindCached(100, tokens).has_value());
  EXPECT_EQ(pool.FindCached(200, tokens), 1);
}

TEST(BlockPoolTest, TouchingAFreeCachedBlockTakesItOffTheFreeQueue) {
  BlockPool pool({.num_blocks = 2, .block_size = 2});
  auto blocks = pool.Allocate(2);
  const std::vector<int32_t> tokens = {1, 2};
  pool.Cache(blocks[0], 7, tokens);
  pool.Free(blocks);
  pool.Touch(std::vector<int32_t>{0});
  EXPECT_EQ(pool.num_free_blocks(), 1);
  EXPECT_THAT(pool.Allocate(1), ElementsAre(1));  // block 0 is in use, not evicted
  EXPECT_EQ(pool.FindCached(7, tokens), 0);
}

TEST(BlockPoolTest, HashCollisionsAreCaughtByTokenComparison) {
  BlockPool pool({.num_blocks = 2, .block_size = 2});
  auto blocks = pool.Allocate(1);
  pool.Cache(blocks[0], 42, std::vector<int32_t>{1, 2});
  EXPECT_FALSE(pool.FindCached(42, std::vector<int32_t>{1, 3}).has_value());
  EXPECT_TRUE(pool.FindCached(42, std::vector<int32_t>{1, 2}).has_value());
}

TEST(BlockPoolTest, ResetPrefixCacheOnlyWhenAllFree) {
  BlockPool pool({.num_blocks = 2, .block_size = 2});
  auto blocks = pool.Allocate(1);
  pool.Cache(blocks[0], 9, std::vector<int32_t>{3, 4});
  EXPECT_FALSE(pool.ResetPrefixCache());
  pool.Free(blocks);
  EXPECT_TRUE(pool.ResetPrefixCache());
  EXPECT_FALSE(pool.FindCached(9, std::vector<int32_t>{3, 4}).has_value());
}

TEST(BlockPoolTest, ReservedNullBlockIsNeverHandedOutFreedOrCached) {
  BlockPool pool({.num_blocks = 4, .block_size = 2, .reserve_null_block = true});
  EXPECT_EQ(pool.num_usable_blocks(), 3);
  EXPECT_EQ(pool.num_free_blocks(), 3);
  auto blocks = pool.Allocate(3);
  EXPECT_THAT(blocks, ElementsAre(1, 2, 3));
  EXPECT_DOUBLE_EQ(pool.usage(), 1.0);
  const std::vector<int32_t> null_block = {BlockPool::kNullBlockId};
  pool.Touch(null_block);
  pool.Free(null_block);
  pool.Cache(BlockPool::kNullBlockId, 5, std::vector<int32_t>{1, 2});
  EXPECT_EQ(pool.ref_count(BlockPool::kNullBlockId), 0);
  EXPECT_EQ(pool.num_free_blocks(), 0);
  EXPECT_FALSE(pool.FindCached(5, std::vector<int32_t>{1, 2}).has_value());
  pool.Free(blocks);
  EXPECT_EQ(pool.num_free_blocks(), 3);
  EXPECT_TRUE(pool.ResetPrefixCache());
}

TEST(BlockPoolTest, GroupsCacheTheSameHashInDifferentBlocks) {
  BlockPool pool({.num_blocks = 3, .block_size = 2});
  auto blocks = pool.Allocate(2);
  const std::vector<int32_t> tokens = {4, 5};
  pool.Cache(blocks[0], 11, tokens, /*group=*/0);
  pool.Cache(blocks[1], 11, tokens, /*group=*/1);
  EXPECT_EQ(pool.FindCached(11, tokens, 0), blocks[0]);
  EXPECT_EQ(pool.FindCached(11, tokens, 1), blocks[1]);
  EXPECT_FALSE(pool.FindCached(11, tokens, 2).has_value());
  // Evicting group 1's block leaves group 0's entry.
  pool.Free(std::vector<int32_t>{blocks[1]});
  pool.Allocate(2);
  EXPECT_EQ(pool.FindCached(11, tokens, 0), blocks[0]);
  EXPECT_FALSE(pool.FindCached(11, tokens, 1).has_value());
}

}  // namespace
}  // namespace vllm
