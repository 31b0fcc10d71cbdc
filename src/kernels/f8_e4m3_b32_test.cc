// F8_E4M3_B32's kernels (packed_f8_layout.h): every code widens to its exact value on every path
// (decode and prefill tiles), the paths agree bit for bit (subnormal activations and products
// included; rows keeping one scale and rows scaled block by block), a row's result is the same at
// m = 1 and m = 64, and the form takes 1.125 bytes a weight.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "common/cpu_features.h"
#include "common/fp8.h"
#include "common/half.h"
#include "kernels/linear_internal.h"
#include "kernels/ops.h"
#include "kernels/packed_f8_layout.h"
#include "kernels/random_values_for_test.h"

namespace vllm::kernels {
namespace {

const TypeTraits& Traits() { return *FindTypeTraits(GgmlType::kF8_E4M3_B32); }

// A weight [rows, cols] of blocks with the given codes (row-major) and one scale per row.
std::vector<uint8_t> MakeBlocks(const std::vector<uint8_t>& codes, const std::vector<float>& scales,
                                int64_t rows, int64_t cols) {
  std::vector<uint8_t> bytes(rows * cols / 32 * sizeof(BlockF8_E4M3_B32));
  auto* blocks = reinterpret_cast<BlockF8_E4M3_B32*>(bytes.data());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < cols / 32; ++b) {
      blocks[r * cols / 32 + b].d = scales[r];
      std::memcpy(blocks[r * cols / 32 + b].codes, codes.data() + r * cols + b * 32, 32);
    }
  }
  return bytes;
}

// A kernel that computes y [m, rows] from x on one path.
struct Path {
  const char* name;
  Isa isa;                                    // the activations it reads
  decltype(PackedKernels::rows) packed_rows;  // nullptr: the in-place scalar kernel
};

std::vector<Path> AvailablePaths() {
  std::vector<Path> paths = {{"scalar", Isa::kScalar, nullptr}};
  const CpuFeatures& features = GetCpuFeatures();
  if (features.HasAvx2Path()) paths.push_back({"avx2", Isa::kAvx2, LinearRowsPackedF8Avx2});
  if (BestIsa() == Isa::kAvx512) {
    paths.push_back({"avx512 dots", Isa::kAvx512, LinearRowsPackedF8DotAvx512});
    paths.push_back({"avx512 fmas", Isa::kAvx512, LinearRowsPackedF8FmaAvx512});
  }
  return paths;
}

std::vector<float> RunPath(const Path& path, const std::vector<uint8_t>& blocks, int64_t rows,
                           int64_t cols, const std::vector<float>& x, int64_t m, ThreadPool& pool) {
  const WeightView view{&Traits(), blocks.data(), rows, cols, cols / 32 * 36};
  std::vector<float> y(m * rows);
  if (path.packed_rows == nullptr) {
    LinearWithIsa(Isa::kScalar, view, x.data(), m, y.data(), pool);
    return y;
  }
  std::vector<uint8_t> packed(Traits().packed.packed_bytes(rows, cols));
  Traits().packed.pack(view, packed.data());
  PreparedActivations prepared =
      PrepareActivations(path.isa, ActivationFormat::kBf16, x.data(), m, cols, pool);
  // Every path's x values, whichever the CPU's BF16 path prepared.
  prepared.bf16_as_f32.resize(m * cols);
  for (int64_t i = 0; i < m * cols; ++i) prepared.bf16_as_f32[i] = Bf16ToFp32(prepared.bf16[i]);
  path.packed_rows(PackedWeightView{&Traits(), rows, cols, packed.data()}, prepared, 0, rows,
                   y.data());
  return y;
}

// Row r, column c holds code (7 r + c) mod 256 (NaN codes as zero), so over 256 columns each row
// has every code; x row i is one-hot at column i, so y[i][r] is that code's value times d = 1.
TEST(F8E4m3B32Test, EveryCodeWidensToItsValueOnEveryPath) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 1});
  constexpr int64_t kRows = 32, kCols = 256;
  std::vector<uint8_t> codes(kRows * kCols);
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kCols; ++c) {
      const auto code = static_cast<uint8_t>((7 * r + c) % 256);
      codes[r * kCols + c] = IsFp8E4m3Nan(code) ? 0 : code;
    }
  }
  const std::vector<uint8_t> blocks =
      MakeBlocks(codes, std::vector<float>(kRows, 1.0f), kRows, kCols);
  for (int64_t m : {int64_t{1}, int64_t{2}, kCols}) {  // decode passes and the prefill tile
    std::vector<float> x(m * kCols, 0.0f);
    for (int64_t i = 0; i < m; ++i) x[i * kCols + (i * 37 + m) % kCols] = 1.0f;
    for (const Path& path : AvailablePaths()) {
      const std::vector<float> y = RunPath(path, blocks, kRows, kCols, x, m, pool);
      for (int64_t i = 0; i < m; ++i) {
        const int64_t c = (i * 37 + m) % kCols;
        for (int64_t r = 0; r < kRows; ++r) {
          const uint8_t code = codes[r * kCols + c];
          ASSERT_EQ(y[i * kRows + r], DecodeFp8E4m3(code))
              << path.name << " m " << m << " row " << r << " code " << int{code};
        }
      }
    }
  }
}

// m rows of `cols` random values, some subnormal once rounded to bf16 and row 3 scaled so its
// products fall below f32's normal range.
std::vector<float> ActivationsWithTinyValues(int64_t m, int64_t cols, uint32_t seed) {
  std::vector<float> x = RandomNormalValues(m * cols, seed);
  for (int64_t i = 0; i < m * cols; ++i) {
    if (i / cols == 3) x[i] = std::ldexp(x[i], -120);
    if (i % 13 == 0) x[i] = std::ldexp(x[i], -130);
  }
  return x;
}

// Whether `got` has `expected`'s bits; both [x rows, num_rows].
::testing::AssertionResult SameBits(const std::vector<float>& got,
                                    const std::vector<float>& expected, int64_t num_rows) {
  if (got.size() != expected.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &expected[i], sizeof(float)) != 0) {
      return ::testing::AssertionFailure() << "x row " << i / num_rows << " row " << i % num_rows
                                           << ": " << got[i] << " vs " << expected[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// Random codes and scales, x with some values subnormal once rounded to bf16 and a row scaled so
// its products fall below f32's normal range: every path gives the scalar kernel's bits, and each
// x row's result at m = 64 (prefill tile) is its result alone (m = 1, decode).
TEST(F8E4m3B32Test, PathsAgreeBitwiseAndRowsDoNotDependOnTheBatch) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 1});
  constexpr int64_t kRows = 48, kCols = 512, kM = 64;
  const std::vector<float> values = RandomNormalValues(kRows * kCols, 21);
  std::vector<uint8_t> blocks(kRows * kCols / 32 * sizeof(BlockF8_E4M3_B32));
  for (int64_t r = 0; r < kRows; ++r) {
    QuantizeRow(GgmlType::kF8_E4M3_B32, values.data() + r * kCols, kCols,
                blocks.data() + r * kCols / 32 * 36);
  }
  const std::vector<float> x = ActivationsWithTinyValues(kM, kCols, 22);
  const std::vector<Path> paths = AvailablePaths();
  const std::vector<float> expected = RunPath(paths[0], blocks, kRows, kCols, x, kM, pool);
  for (const Path& path : paths) {
    const std::vector<float> batched = RunPath(path, blocks, kRows, kCols, x, kM, pool);
    ASSERT_TRUE(SameBits(batched, expected, kRows)) << path.name;
    for (int64_t i : {0, 3, 5, 63}) {
      const std::vector<float> row(x.begin() + i * kCols, x.begin() + (i + 1) * kCols);
      const std::vector<float> alone = RunPath(path, blocks, kRows, kCols, row, 1, pool);
      ASSERT_EQ(std::memcmp(alone.data(), batched.data() + i * kRows, kRows * sizeof(float)), 0)
          << path.name << " x row " << i;
    }
  }
}

// Rows that keep one scale (per-tensor, per-channel) are summed as one chain and scaled once;
// others block by block. Groups of 16 rows of each kind, and one mixing both, side by side as the
// kernels pair them (prefill pairs, decode threes): every path gives the scalar kernel's bits, and
// each x row alone (decode) its bits in the batch.
TEST(F8E4m3B32Test, RowsKeepingOneScaleAgreeBitwiseOnEveryPathAndBatch) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 1});
  constexpr int64_t kRows = 96, kCols = 256, kM = 64;
  // Groups: 0-2 one scale per row, 3 a scale per block, 4 both (odd rows per block), 5 one scale
  // for the whole group.
  auto one_scale = [](int64_t row) {
    const int64_t group = row / 16;
    return group <= 2 || group == 5 || (group == 4 && row % 2 == 0);
  };
  const std::vector<float> values = RandomNormalValues(kRows * kCols, 31);
  std::vector<uint8_t> blocks(kRows * kCols / 32 * sizeof(BlockF8_E4M3_B32));
  auto* rows = reinterpret_cast<BlockF8_E4M3_B32*>(blocks.data());
  for (int64_t r = 0; r < kRows; ++r) {
    BlockF8_E4M3_B32* row = rows + r * kCols / 32;
    QuantizeRow(GgmlType::kF8_E4M3_B32, values.data() + r * kCols, kCols, row);
    if (!one_scale(r)) continue;
    const float d = r / 16 == 5 ? 0x1.3p-7f : 0x1.1p-8f * static_cast<float>(1 + r % 5);
    for (int64_t b = 0; b < kCols / 32; ++b) row[b].d = d;
  }
  const std::vector<float> x = ActivationsWithTinyValues(kM, kCols, 32);
  const std::vector<Path> paths = AvailablePaths();
  const std::vector<float> expected = RunPath(paths[0], blocks, kRows, kCols, x, kM, pool);
  for (const Path& path : paths) {
    const std::vector<float> batched = RunPath(path, blocks, kRows, kCols, x, kM, pool);
    ASSERT_TRUE(SameBits(batched, expected, kRows)) << path.name;
    for (int64_t m : {1, 2, 3, 5}) {
      const std::vector<float> first_rows(x.begin(), x.begin() + m * kCols);
      const std::vector<float> alone = RunPath(path, blocks, kRows, kCols, first_rows, m, pool);
      ASSERT_EQ(std::memcmp(alone.data(), batched.data(), m * kRows * sizeof(float)), 0)
          << path.name << " m " << m;
    }
  }
}

// Per-tensor, per-channel and 128 × 128 block scales are each block's d: the dequantized weight is
// e4m3 · d in f32, bit for bit.
TEST(F8E4m3B32Test, DequantizesToCodeTimesScale) {
  const std::vector<uint8_t> codes = {0x00, 0x01, 0x07, 0x08, 0x38, 0x7e, 0x80, 0x81, 0xfe, 0x40};
  std::vector<uint8_t> row_codes(32);
  for (int k = 0; k < 32; ++k) row_codes[k] = codes[k % codes.size()];
  const float scale = 0x1.009d8ap-9f;
  const std::vector<uint8_t> blocks = MakeBlocks(row_codes, {scale}, 1, 32);
  std::vector<float> values(32);
  DequantizeRow(GgmlType::kF8_E4M3_B32, blocks.data(), 32, values.data());
  for (int k = 0; k < 32; ++k) {
    EXPECT_EQ(BitsFromFp32(values[k]), BitsFromFp32(DecodeFp8E4m3(row_codes[k]) * scale)) << k;
  }
}

// The packed form keeps a byte per weight plus 16 f32 scales per 16 × 32 values (1.125 bytes a
// weight, 56.25 % of BF16's) and a word per 16 rows saying which keep one scale.
TEST(F8E4m3B32Test, PackedFormTakesNineEighthsOfAByteAWeight) {
  const PackedForm& form = Traits().packed;
  EXPECT_EQ(form.packed_bytes(2048, 5632), 2048 * 5632 / 8 * 9 + 2048 / 16 * 4);
  EXPECT_EQ(RowBytes(Traits().layout, 5632), 5632 / 8 * 9);
#if defined(__x86_64__)
  constexpr bool x86 = true;  // the x86 kernels are in this build (elsewhere weak and null)
#else
  constexpr bool x86 = false;
#endif
  EXPECT_EQ(form.kernels[static_cast<int>(Isa::kAvx2)].rows != nullptr, x86);
  EXPECT_EQ(form.kernels[static_cast<int>(Isa::kAvx512)].rows != nullptr, x86);
}

}  // namespace
}  // namespace vllm::kernels
