// Building a ForwardBatch over several KV cache groups, and what ValidateForwardBatch refuses.
#include "model/forward_batch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace vllm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Tables = std::vector<std::vector<int32_t>>;

constexpr int32_t kNull = KvStorage::kNullBlockId;
constexpr int64_t kBlockSize = 4;

// Layers 0 and 2 full attention, 1 and 3 sliding with a window of 6: groups {0, 2} and {1, 3}.
std::unique_ptr<KvStorage> HybridStorage() {
  auto kv =
      KvStorage::Create({.num_layers = 4,
                         .num_blocks = 16,
                         .block_size = kBlockSize,
                         .num_kv_heads = 1,
                         .head_dim = 4,
                         .layout = KvCacheLayoutFromWindows(std::vector<int64_t>{0, 6, 0, 6})});
  EXPECT_TRUE(kv.ok()) << kv.error();
  return std::move(*kv);
}

TEST(ForwardBatchTest, AppendSequenceFillsEveryGroupsSlots) {
  ForwardBatch batch;
  const Tables first = {{3, 5}, {7, 9}};
  ASSERT_TRUE(AppendSequence(std::vector<int32_t>{10, 11}, 3, first, kBlockSize, batch).ok());
  const Tables second = {{1}, {2}};
  ASSERT_TRUE(AppendSequence(std::vector<int32_t>{12}, 0, second, kBlockSize, batch).ok());
  EXPECT_THAT(batch.token_ids, ElementsAre(10, 11, 12));
  EXPECT_THAT(batch.positions, ElementsAre(3, 4, 0));
  EXPECT_THAT(batch.query_start_loc, ElementsAre(0, 2, 3));
  EXPECT_THAT(batch.seq_lens, ElementsAre(5, 1));
  ASSERT_EQ(batch.kv_groups.size(), 2u);
  EXPECT_THAT(batch.kv_groups[0].slot_mapping, ElementsAre(3 * 4 + 3, 5 * 4 + 0, 1 * 4 + 0));
  EXPECT_THAT(batch.kv_groups[1].slot_mapping, ElementsAre(7 * 4 + 3, 9 * 4 + 0, 2 * 4 + 0));
  EXPECT_EQ(batch.kv_groups[1].block_tables, Tables({{7, 9}, {2}}));
  // A table that does not cover the tokens, or another number of groups, is refused.
  EXPECT_FALSE(AppendSequence(std::vector<int32_t>{1}, 8, first, kBlockSize, batch).ok());
  EXPECT_FALSE(AppendSequence(std::vector<int32_t>{1}, 0, Tables{{4}}, kBlockSize, batch).ok());
}

TEST(ForwardBatchTest, NullEntriesAreAllowedOnlyBeforeEveryWindowOfASlidingGroup) {
  std::unique_ptr<KvStorage> kv = HybridStorage();
  // Tokens at positions 13 and 14 see [8, 14] at the earliest: blocks 2 and 3 (window 6).
  auto batch_with = [](const Tables& tables) {
    ForwardBatch batch;
    EXPECT_TRUE(AppendSequence(std::vector<int32_t>{1, 2}, 13, tables, kBlockSize, batch).ok());
    return batch;
  };
  EXPECT_TRUE(ValidateForwardBatch(batch_with({{1, 2, 3, 4}, {kNull, kNull, 5, 6}}), *kv).ok());
  // Block 2 holds position 8, which position 13 sees.
  Status status = ValidateForwardBatch(batch_with({{1, 2, 3, 4}, {kNull, kNull, kNull, 6}}), *kv);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("null block"));
  // A full-attention group sees every block; the null block is no block of it.
  EXPECT_FALSE(
      ValidateForwardBatch(batch_with({{kNull, 2, 3, 4}, {kNull, kNull, 5, 6}}), *kv).ok());
  // A decode token at 14 alone sees [9, 14]: block 2 still, so the same table is refused.
  ForwardBatch decode;
  ASSERT_TRUE(AppendSequence(std::vector<int32_t>{1}, 14,
                             Tables{{1, 2, 3, 4}, {kNull, kNull, kNull, 6}}, kBlockSize, decode)
                  .ok());
  EXPECT_FALSE(ValidateForwardBatch(decode, *kv).ok());
  // One group's tables where the storage has two.
  ForwardBatch one_group;
  ASSERT_TRUE(AppendSequence(std::vector<int32_t>{1}, 0, Tables{{1}}, kBlockSize, one_group).ok());
  EXPECT_FALSE(ValidateForwardBatch(one_group, *kv).ok());
}

TEST(ForwardBatchTest, ASlidingLayerMustSitInAGroupKeepingItsWindow) {
  ModelConfig config;
  config.vocab_size = 8;
  config.num_layers = 4;
  config.num_kv_heads = 1;
  config.head_dim = 4;
  config.sliding_window = 6;
  config.sliding_window_pattern = 2;                // layers 1 and 3 global, 0 and 2 sliding
  std::unique_ptr<KvStorage> kv = HybridStorage();  // keeps only 6 positions of layers 1 and 3
  ForwardBatch batch;
  ASSERT_TRUE(AppendSequence(std::vector<int32_t>{1}, 0, Tables{{1}, {2}}, kBlockSize, batch).ok());
  ASSERT_TRUE(ValidateForwardBatch(batch, *kv).ok());
  Status status = ValidateForwardBatch(batch, *kv, config);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("attends past the window"));
  config.sliding_window_pattern = 0;  // every layer sliding: the full group keeps more than enough
  config.sliding_window = 6;
  EXPECT_TRUE(ValidateForwardBatch(batch, *kv, config).ok());
}

}  // namespace
}  // namespace vllm
