// KV storage: reserved and resident at creation, refused with a clear message when it cannot be.
#include "model/kv_storage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <fstream>
#include <string>
#include <vector>

namespace vllm {
namespace {

using ::testing::HasSubstr;

// The value in kB of `key` ("VmRSS", "VmSize") in /proc/self/status, in bytes.
int64_t ProcessStatusBytes(const std::string& key) {
  std::ifstream status("/proc/self/status");
  std::string name;
  int64_t kilobytes = 0;
  while (status >> name) {
    if (name == key + ":" && status >> kilobytes) return kilobytes * 1024;
    status.ignore(1 << 10, '\n');
  }
  return -1;
}

// 64 MiB: 8192 tokens of one layer with 8 KV heads of 128.
const KvStorage::Options k64MiB = {
    .num_layers = 1, .num_blocks = 512, .block_size = 16, .num_kv_heads = 8, .head_dim = 128};

TEST(KvStorageTest, IsResidentFromCreationAndReleasedWithIt) {
  const int64_t rss_before = ProcessStatusBytes("VmRSS");
  ASSERT_GT(rss_before, 0);
  auto kv = KvStorage::Create(k64MiB);
  ASSERT_TRUE(kv.ok()) << kv.error();
  ASSERT_EQ(KvStorage::BytesPerBlock(k64MiB) * k64MiB.num_blocks, int64_t{64} << 20);
  // Resident before anything is written through key() / value().
  const int64_t rss_created = ProcessStatusBytes("VmRSS");
  EXPECT_GE(rss_created - rss_before, int64_t{63} << 20);
  EXPECT_LE(rss_created - rss_before, int64_t{72} << 20);
  // Zeros, and K and V do not overlap.
  EXPECT_EQ((*kv)->key(0, k64MiB.num_blocks - 1, k64MiB.block_size - 1,
                       k64MiB.num_kv_heads - 1)[k64MiB.head_dim - 1],
            0.0f);
  EXPECT_EQ((*kv)->value(0, 0, 0, 0) - (*kv)->key(0, 0, 0, 0),
            (*kv)->num_slots() * (*kv)->row_size());
  kv.value().reset();
  EXPECT_LE(ProcessStatusBytes("VmRSS") - rss_before, int64_t{8} << 20);
}

TEST(KvStorageTest, RefusesMoreThanTheMemoryAvailableNamingTheFlag) {
  // 64 TiB: 32 layers of 8 KV heads of 128, 2^24 blocks of 16 tokens.
  auto kv = KvStorage::Create({.num_layers = 32,
                               .num_blocks = 1 << 24,
                               .block_size = 16,
                               .num_kv_heads = 8,
                               .head_dim = 128});
  ASSERT_FALSE(kv.ok());
  EXPECT_THAT(kv.error(), HasSubstr("a KV cache of 65536.0 GiB does not fit"));
  EXPECT_THAT(kv.error(), HasSubstr("of memory is available; lower --kv-cache-memory-bytes"));
}

TEST(KvStorageTest, ABlockHoldsTheLayersOfItsGroup) {
  // Layers 0 and 2 sliding, 1 and 3 full: two groups of 2 layers; a block holds 2 layers.
  const KvCacheLayout layout = KvCacheLayoutFromWindows(std::vector<int64_t>{8, 0, 8, 0});
  const KvStorage::Options options = {.num_layers = 4,
                                      .num_blocks = 3,
                                      .block_size = 4,
                                      .num_kv_heads = 2,
                                      .head_dim = 8,
                                      .layout = layout};
  EXPECT_EQ(KvStorage::BytesPerBlock(options), 2 * 2 * 4 * 2 * 8 * 4);
  auto kv = KvStorage::Create(options);
  ASSERT_TRUE(kv.ok()) << kv.error();
  KvStorage& storage = **kv;
  const int64_t row = storage.row_size();  // 2 KV heads × 8
  // [block][place in group][KV head][offset][head_dim]: layer 2 is at place 1 of its group, layer
  // 3 at place 1 too.
  EXPECT_EQ(storage.key(0, 1, 0, 0) - storage.key(0, 0, 0, 0), 2 * 4 * row);
  EXPECT_EQ(storage.key(2, 0, 0, 0) - storage.key(0, 0, 0, 0), 4 * row);
  EXPECT_EQ(storage.key(3, 0, 0, 0), storage.key(2, 0, 0, 0));  // same block, other group's table
  EXPECT_EQ(storage.key(0, 0, 0, 1) - storage.key(0, 0, 0, 0), 4 * 8);  // a KV head's 4 rows
  EXPECT_EQ(storage.key(0, 0, 3, 1) - storage.key(0, 0, 0, 1), 3 * 8);
  EXPECT_EQ(storage.value(0, 0, 0, 0) - storage.key(0, 0, 0, 0), 3 * 2 * 4 * row);
  // Without a layout, one block holds every layer.
  EXPECT_EQ(KvStorage::BytesPerBlock(
                {.num_layers = 4, .block_size = 4, .num_kv_heads = 2, .head_dim = 8}),
            2 * 4 * 4 * 2 * 8 * 4);
  EXPECT_FALSE(KvStorage::Create({.num_layers = 3,
                                  .num_blocks = 3,
                                  .block_size = 4,
                                  .num_kv_heads = 2,
                                  .head_dim = 8,
                                  .layout = layout})
                   .ok());
}

TEST(KvStorageTest, TheSameMemoryHoldsTwiceTheBlocksInBf16AndAboutFourTimesInFp8OrInt8) {
  using kernels::KvCacheDtype;
  KvStorage::Options options = k64MiB;  // 8 KV heads of 128
  const int64_t f32_bytes = KvStorage::BytesPerBlock(options);
  options.dtype = KvCacheDtype::kBFloat16;
  EXPECT_EQ(KvStorage::BytesPerBlock(options) * 2, f32_bytes);
  // One byte per value plus one f32 scale per row of 128 values.
  for (KvCacheDtype dtype : {KvCacheDtype::kFp8E4m3, KvCacheDtype::kInt8}) {
    options.dtype = dtype;
    EXPECT_EQ(KvStorage::BytesPerBlock(options), f32_bytes / 4 * (128 + 4) / 128);
  }
}

// k, v: [num_kv_heads = 2, head_dim = 8]; head 1's values 10 times head 0's.
std::vector<float> TwoHeadRow(float base) {
  std::vector<float> row(16);
  for (int i = 0; i < 16; ++i) row[i] = (base + 0.37f * i - 2.0f) * (i < 8 ? 1.0f : 10.0f);
  return row;
}

TEST(KvStorageTest, WriteStoresEachKvHeadsRowWithItsOwnScaleAtItsSlot) {
  using kernels::KvCacheDtype;
  for (KvCacheDtype dtype : {KvCacheDtype::kFloat32, KvCacheDtype::kBFloat16,
                             KvCacheDtype::kFp8E4m3, KvCacheDtype::kInt8}) {
    SCOPED_TRACE(kernels::KvCacheDtypeName(dtype));
    auto kv = KvStorage::Create({.num_layers = 2,
                                 .num_blocks = 3,
                                 .block_size = 4,
                                 .num_kv_heads = 2,
                                 .head_dim = 8,
                                 .dtype = dtype});
    ASSERT_TRUE(kv.ok()) << kv.error();
    const std::vector<float> k = TwoHeadRow(1.0f), v = TwoHeadRow(-3.0f);
    (*kv)->Write(1, /*slot=*/6, k.data(), v.data());  // block 1, offset 2
    (*kv)->Write(1, /*slot=*/7, v.data(), k.data());  // its neighbour, swapped
    for (int64_t head = 0; head < 2; ++head) {
      for (auto [rows, source] :
           {std::pair{(*kv)->keys(1, 1, 2, head), &k}, {(*kv)->values(1, 1, 2, head), &v}}) {
        // What the row alone stores, and what it decodes to.
        std::vector<uint8_t> expected_bytes(8 * kernels::KvValueBytes(dtype));
        float expected_scale = 1.0f;
        kernels::QuantizeKvRow(dtype, source->data() + head * 8, 8, expected_bytes.data(),
                               &expected_scale);
        EXPECT_EQ(std::vector<uint8_t>(rows.data, rows.data + expected_bytes.size()),
                  expected_bytes);
        const float scale = rows.scales != nullptr ? rows.scales[0] : 1.0f;
        if (rows.scales != nullptr) {
          EXPECT_EQ(scale, expected_scale);
        }
        std::vector<float> decoded(8);
        kernels::DequantizeKvRow(dtype, rows.data, scale, 8, decoded.data());
        for (int i = 0; i < 8; ++i) {
          EXPECT_NEAR(decoded[i], (*source)[head * 8 + i], std::abs((*source)[head * 8 + i]) / 8);
        }
      }
    }
    // Offset 3 follows one row later; layer 0's slot 6 is untouched (zeros).
    const kernels::KvRows next = (*kv)->keys(1, 1, 3, 0);
    EXPECT_EQ(next.data, (*kv)->keys(1, 1, 2, 0).data + (*kv)->keys(1, 1, 2, 0).row_stride_bytes);
    std::vector<float> decoded(8);
    kernels::DequantizeKvRow(dtype, next.data, next.scales != nullptr ? next.scales[0] : 1.0f, 8,
                             decoded.data());
    EXPECT_NEAR(decoded[0], v[0], std::abs(v[0]) / 8);
    const kernels::KvRows other_layer = (*kv)->keys(0, 1, 2, 1);
    kernels::DequantizeKvRow(dtype, other_layer.data,
                             other_layer.scales != nullptr ? other_layer.scales[0] : 1.0f, 8,
                             decoded.data());
    EXPECT_EQ(decoded, std::vector<float>(8, 0.0f));
  }
}

#if defined(__SANITIZE_ADDRESS__)
#define VLLM_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VLLM_ADDRESS_SANITIZER 1
#endif
#endif

TEST(KvStorageTest, AnAllocationFailureIsAnError) {
#ifdef VLLM_ADDRESS_SANITIZER
  GTEST_SKIP() << "AddressSanitizer needs address space a limit would deny";
#endif
  // An address-space limit 16 MiB above what the process maps now: 64 MiB cannot be mapped.
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_AS, &saved), 0);
  rlimit limited = saved;
  limited.rlim_cur = static_cast<rlim_t>(ProcessStatusBytes("VmSize") + (int64_t{16} << 20));
  ASSERT_EQ(::setrlimit(RLIMIT_AS, &limited), 0);
  auto kv = KvStorage::Create(k64MiB);
  ASSERT_EQ(::setrlimit(RLIMIT_AS, &saved), 0);
  ASSERT_FALSE(kv.ok());
  EXPECT_THAT(kv.error(), HasSubstr("--kv-cache-memory-bytes: cannot reserve 64.0 MiB"));
}

}  // namespace
}  // namespace vllm
