#include "model/forward_batch_wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

namespace vllm {
namespace {

using ::testing::HasSubstr;

// Two sequences over two KV cache groups, with token types and one embeddings entry.
struct SampleBatch {
  std::vector<float> embeds = {0.5f, -1.f, 2.f, 3.25f};
  ForwardBatch batch;

  SampleBatch() {
    batch.token_ids = {5, 6, 7, 9};
    batch.positions = {0, 1, 2, 4};
    batch.query_start_loc = {0, 3, 4};
    batch.seq_lens = {3, 5};
    batch.logits_indices = {2, 3};
    batch.token_type_ids = {0, 0, 1, 0};
    batch.kv_groups = {{.slot_mapping = {16, 17, 18, 36}, .block_tables = {{1}, {3, 2}}},
                       {.slot_mapping = {80, 81, 82, 100}, .block_tables = {{5}, {0, 6}}}};
    batch.input_embeds = {{.first_row = 1, .values = embeds}};
  }
};

TEST(ForwardBatchWireTest, RoundTripsEveryField) {
  SampleBatch sample;
  auto bytes = SerializeForwardBatch(sample.batch);
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  auto read = DeserializeForwardBatch(*bytes);
  ASSERT_TRUE(read.ok()) << read.error();
  const ForwardBatch& batch = read->batch;
  EXPECT_EQ(batch.token_ids, sample.batch.token_ids);
  EXPECT_EQ(batch.positions, sample.batch.positions);
  EXPECT_EQ(batch.query_start_loc, sample.batch.query_start_loc);
  EXPECT_EQ(batch.seq_lens, sample.batch.seq_lens);
  EXPECT_EQ(batch.logits_indices, sample.batch.logits_indices);
  EXPECT_EQ(batch.token_type_ids, sample.batch.token_type_ids);
  ASSERT_EQ(batch.kv_groups.size(), 2u);
  for (size_t g = 0; g < 2; ++g) {
    EXPECT_EQ(batch.kv_groups[g].slot_mapping, sample.batch.kv_groups[g].slot_mapping);
    EXPECT_EQ(batch.kv_groups[g].block_tables, sample.batch.kv_groups[g].block_tables);
  }
  ASSERT_EQ(batch.input_embeds.size(), 1u);
  EXPECT_EQ(batch.input_embeds[0].first_row, 1);
  EXPECT_THAT(batch.input_embeds[0].values, ::testing::ElementsAreArray(sample.embeds));
  // The spans point into the message's own storage, which a move keeps.
  WireForwardBatch moved = std::move(*read);
  EXPECT_EQ(moved.batch.input_embeds[0].values.data(), moved.input_embeds_values[0].data());
  EXPECT_TRUE(moved.batch.seq_loras.empty());
}

TEST(ForwardBatchWireTest, AnEmptyBatchRoundTrips) {
  auto bytes = SerializeForwardBatch(ForwardBatch{});
  ASSERT_TRUE(bytes.ok());
  auto read = DeserializeForwardBatch(*bytes);
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_EQ(read->batch.num_tokens(), 0);
  EXPECT_TRUE(read->batch.kv_groups.empty());
}

TEST(ForwardBatchWireTest, EveryTruncationAndTrailingBytesAreErrors) {
  SampleBatch sample;
  auto bytes = SerializeForwardBatch(sample.batch);
  ASSERT_TRUE(bytes.ok());
  for (size_t size = 0; size < bytes->size(); ++size) {
    auto read = DeserializeForwardBatch(std::span<const uint8_t>(bytes->data(), size));
    EXPECT_FALSE(read.ok()) << size;
  }
  std::vector<uint8_t> longer = *bytes;
  longer.push_back(0);
  auto read = DeserializeForwardBatch(longer);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.error(), HasSubstr("1 bytes after its end"));
}

TEST(ForwardBatchWireTest, AHugeCountIsAnErrorNotAnAllocation) {
  SampleBatch sample;
  auto bytes = SerializeForwardBatch(sample.batch);
  ASSERT_TRUE(bytes.ok());
  // token_ids' count follows the 4-byte kind.
  const int64_t huge = int64_t{1} << 60;
  std::memcpy(bytes->data() + 4, &huge, sizeof(huge));
  auto read = DeserializeForwardBatch(*bytes);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.error(), HasSubstr("token_ids count"));
  const int64_t negative = -1;
  std::memcpy(bytes->data() + 4, &negative, sizeof(negative));
  EXPECT_FALSE(DeserializeForwardBatch(*bytes).ok());
}

TEST(ForwardBatchWireTest, RefusesLoraAdaptersAndOtherMessages) {
  SampleBatch sample;
  lora::LoraWeights adapter;
  sample.batch.seq_loras = {nullptr, &adapter};
  auto refused = SerializeForwardBatch(sample.batch);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error(), HasSubstr("LoRA adapters are not supported with tensor parallel"));
  sample.batch.seq_loras = {nullptr, nullptr};
  EXPECT_TRUE(SerializeForwardBatch(sample.batch).ok());

  const std::vector<uint8_t> kv = SerializeKvStorageOptions({.num_layers = 2});
  auto wrong_kind = DeserializeForwardBatch(kv);
  ASSERT_FALSE(wrong_kind.ok());
  EXPECT_THAT(wrong_kind.error(), HasSubstr("not a forward batch message"));
}

TEST(ForwardBatchWireTest, KvStorageOptionsRoundTrip) {
  KvStorage::Options options{.num_layers = 3,
                             .num_blocks = 41,
                             .block_size = 16,
                             .num_kv_heads = 2,
                             .head_dim = 64,
                             .dtype = kernels::KvCacheDtype::kInt8,
                             .layout = KvCacheLayoutFromWindows(std::vector<int64_t>{512, 0, 512})};
  const std::vector<uint8_t> bytes = SerializeKvStorageOptions(options);
  auto read = DeserializeKvStorageOptions(bytes);
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_EQ(read->num_layers, 3);
  EXPECT_EQ(read->num_blocks, 41);
  EXPECT_EQ(read->block_size, 16);
  EXPECT_EQ(read->num_kv_heads, 2);
  EXPECT_EQ(read->head_dim, 64);
  EXPECT_EQ(read->dtype, kernels::KvCacheDtype::kInt8);
  EXPECT_EQ(read->layout.group_size, options.layout.group_size);
  ASSERT_EQ(read->layout.groups.size(), options.layout.groups.size());
  for (size_t g = 0; g < options.layout.groups.size(); ++g) {
    EXPECT_EQ(read->layout.groups[g].sliding_window, options.layout.groups[g].sliding_window);
    EXPECT_EQ(read->layout.groups[g].layers, options.layout.groups[g].layers);
  }
  EXPECT_EQ(read->layout.group_of_layer, options.layout.group_of_layer);
  EXPECT_EQ(read->layout.place_in_group, options.layout.place_in_group);
  for (size_t size = 0; size < bytes.size(); ++size) {
    EXPECT_FALSE(DeserializeKvStorageOptions(std::span<const uint8_t>(bytes.data(), size)).ok());
  }
  std::vector<uint8_t> bad_dtype = bytes;
  bad_dtype[4 + 5 * sizeof(int64_t)] = 9;
  auto refused = DeserializeKvStorageOptions(bad_dtype);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error(), HasSubstr("unknown KV cache dtype 9"));
}

}  // namespace
}  // namespace vllm
