#include "engine/kv_cache_sizing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vllm {
namespace {

using ::testing::HasSubstr;

// 4 layers of 2 KV heads of 64: an f32 block of 16 tokens is 2 · 4 · 16 · 2 · 64 · 4 = 64 KiB.
ModelConfig SmallConfig() {
  ModelConfig config;
  config.num_layers = 4;
  config.num_kv_heads = 2;
  config.head_dim = 64;
  return config;
}

EngineArgs ArgsWithDtype(const std::string& kv_cache_dtype) {
  return {.block_size = 16,
          .kv_cache_memory_bytes = int64_t{64} << 20,
          .kv_cache_dtype = kv_cache_dtype,
          .max_model_len = 256,
          .max_num_seqs = 1000};  // no cap from the sequences
}

TEST(KvCacheSizingTest, TheKvCacheDtypeSetsHowManyBlocksTheMemoryHolds) {
  const ModelConfig config = SmallConfig();
  const KvCacheLayout layout = SingleGroupKvCacheLayout(config.num_layers);
  auto f32 = SizeKvCache(config, layout, ArgsWithDtype("float32"));
  ASSERT_TRUE(f32.ok()) << f32.error();
  EXPECT_EQ(f32->dtype, kernels::KvCacheDtype::kFloat32);
  EXPECT_EQ(f32->bytes_per_block, 64 << 10);
  EXPECT_EQ(f32->num_blocks, 1024);
  auto bf16 = SizeKvCache(config, layout, ArgsWithDtype("bfloat16"));
  ASSERT_TRUE(bf16.ok()) << bf16.error();
  EXPECT_EQ(bf16->dtype, kernels::KvCacheDtype::kBFloat16);
  EXPECT_EQ(bf16->num_blocks, 2048);
  // One byte per value and a 4-byte scale per 64 values: 17 KiB per block.
  for (const char* name : {"fp8", "fp8_e4m3", "int8"}) {
    auto size = SizeKvCache(config, layout, ArgsWithDtype(name));
    ASSERT_TRUE(size.ok()) << size.error();
    EXPECT_EQ(size->bytes_per_block, 2 * 4 * 16 * 2 * (64 + 4)) << name;
    EXPECT_EQ(size->num_blocks, (int64_t{64} << 20) / (2 * 4 * 16 * 2 * (64 + 4))) << name;
  }
  EXPECT_EQ(SizeKvCache(config, layout, ArgsWithDtype("fp8"))->dtype,
            kernels::KvCacheDtype::kFp8E4m3);
  // The engine resolves auto from the weights first; a bare auto here is float32.
  EXPECT_EQ(SizeKvCache(config, layout, ArgsWithDtype("auto"))->num_blocks, 1024);
}

TEST(KvCacheSizingTest, AnUnknownKvCacheDtypeIsAnErrorListingTheValidOnes) {
  const ModelConfig config = SmallConfig();
  auto size =
      SizeKvCache(config, SingleGroupKvCacheLayout(config.num_layers), ArgsWithDtype("fp8_e5m2"));
  ASSERT_FALSE(size.ok());
  EXPECT_THAT(size.error(), HasSubstr("unsupported --kv-cache-dtype 'fp8_e5m2' (supported: auto, "
                                      "float32, bfloat16, fp8, fp8_e4m3, int8)"));
}

}  // namespace
}  // namespace vllm
