#include "kernels/kv_line_prefetcher.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace vllm::kernels {
namespace {

// The lines of [begin, end), in order.
std::vector<uintptr_t> LinesOf(const uint8_t* begin, const uint8_t* end) {
  std::vector<uintptr_t> lines;
  for (uintptr_t line = reinterpret_cast<uintptr_t>(begin) / 64 * 64;
       line < reinterpret_cast<uintptr_t>(end); line += 64) {
    lines.push_back(line);
  }
  return lines;
}

// Every line of the values' rows, then of the keys', slot by slot, once each: rows that start
// inside a line, a slot of fewer keys, an empty slot, bf16 and f32 rows.
TEST(KvLinePrefetcherTest, AsksForEachLineOfValuesThenKeysOnce) {
  alignas(64) static uint8_t keys[8192], values[8192];
  const int64_t head_dim = 64;
  KvPrefetch rows;
  rows.num_keys[0] = 16;  // bf16 rows of 128 bytes, starting 32 bytes into a line
  rows.keys[0] = {.dtype = KvCacheDtype::kBFloat16, .data = keys + 32, .row_stride_bytes = 128};
  rows.values[0] = {.dtype = KvCacheDtype::kBFloat16, .data = values + 32, .row_stride_bytes = 128};
  rows.num_keys[2] = 3;  // f32 rows of 256 bytes
  rows.keys[2] = {.dtype = KvCacheDtype::kFloat32, .data = keys + 4096, .row_stride_bytes = 256};
  rows.values[2] = {
      .dtype = KvCacheDtype::kFloat32, .data = values + 4096, .row_stride_bytes = 256};

  std::vector<uintptr_t> expected;
  for (const auto& [data, bytes] : {std::pair{values + 32, 16 * 128}, std::pair{values + 4096, 768},
                                    std::pair{keys + 32, 16 * 128}, std::pair{keys + 4096, 768}}) {
    const std::vector<uintptr_t> lines = LinesOf(data, data + bytes);
    expected.insert(expected.end(), lines.begin(), lines.end());
  }
  KvLinePrefetcher prefetcher(rows, head_dim);
  EXPECT_EQ(prefetcher.num_lines(), static_cast<int>(expected.size()));
  std::vector<uintptr_t> asked;
  while (prefetcher.next_line() != 0) {
    asked.push_back(prefetcher.next_line());
    prefetcher.Issue(1);
  }
  EXPECT_EQ(asked, expected);
  prefetcher.IssueRest();  // nothing left: no effect
  EXPECT_EQ(prefetcher.next_line(), 0u);
}

TEST(KvLinePrefetcherTest, NothingToAskForWithoutRows) {
  KvLinePrefetcher prefetcher(KvPrefetch{}, 64);
  EXPECT_EQ(prefetcher.num_lines(), 0);
  EXPECT_EQ(prefetcher.next_line(), 0u);
  prefetcher.IssueRest();
}

}  // namespace
}  // namespace vllm::kernels
