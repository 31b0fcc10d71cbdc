#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/isa.h"
#include "kernels/linear_internal.h"
#include "kernels/ops.h"
#include "kernels/quant_blocks.h"

namespace vllm::kernels {
namespace {

TEST(QuantizeTest, RoundTripsWithinEachFormatsError) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t n = 4096;
  std::vector<float> x(n);
  for (auto& v : x) v = normal(rng);
  struct Case {
    GgmlType type;
    double max_relative_rms_error;
  };
  // q8_0: step max/127 per block; q4_0: step max/8; f16 / bf16: 11 / 8 mantissa bits.
  for (const Case& c :
       {Case{GgmlType::kF32, 0.0}, Case{GgmlType::kF16, 1e-3}, Case{GgmlType::kBF16, 5e-3},
        Case{GgmlType::kQ8_0, 1e-2}, Case{GgmlType::kQ4_0, 1.5e-1}}) {
    std::vector<uint8_t> bytes(RowBytes(*GetSupportedTypeTraits(c.type), n));
    QuantizeRow(c.type, x.data(), n, bytes.data());
    std::vector<float> back(n);
    DequantizeRow(c.type, bytes.data(), n, back.data());
    double error = 0, norm = 0;
    for (int64_t i = 0; i < n; ++i) {
      error += (back[i] - x[i]) * (back[i] - x[i]);
      norm += x[i] * x[i];
    }
    EXPECT_LE(std::sqrt(error / norm), c.max_relative_rms_error)
        << GetSupportedTypeTraits(c.type)->name;
  }
}

// The AVX-512 preparation of Q8_0 activations gives the scalar path's blocks, scales and sums bit
// for bit: random rows over many magnitudes, a zero block, ties at half a step, tiny (subnormal
// fp16 scale) and huge (inf scale) blocks, NaN and infinities.
TEST(QuantizeTest, Avx512Q8ActivationsAreBitIdenticalToScalar) {
  if (BestIsa() != Isa::kAvx512) GTEST_SKIP() << "no AVX-512 on this CPU";
  const int64_t m = 7, cols = 256;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(m * cols);
  for (int64_t i = 0; i < m * cols; ++i) x[i] = normal(rng) * std::ldexp(1.0f, i / 32 % 40 - 20);
  for (int64_t i = 32; i < 64; ++i) x[i] = 0.0f;
  for (int64_t i = 64; i < 96; ++i) x[i] = static_cast<float>(i - 64) - 15.5f;  // d = 1: ties
  x[96] = 127.0f;
  for (int64_t i = 128; i < 160; ++i) x[i] = 1e-40f * static_cast<float>(i - 140);
  x[200] = 3e38f;
  x[300] = std::nanf("");
  x[400] = INFINITY;
  x[500] = -INFINITY;
  ThreadPool pool({.num_threads = 2});
  const PreparedActivations scalar =
      PrepareActivations(Isa::kScalar, ActivationFormat::kQ8, x.data(), m, cols, pool);
  const PreparedActivations avx512 =
      PrepareActivations(Isa::kAvx512, ActivationFormat::kQ8, x.data(), m, cols, pool);
  ASSERT_EQ(scalar.q8.size(), avx512.q8.size());
  for (size_t b = 0; b < scalar.q8.size(); ++b) {
    EXPECT_EQ(scalar.q8[b].d, avx512.q8[b].d) << b;
    for (int i = 0; i < 32; ++i) EXPECT_EQ(scalar.q8[b].qs[i], avx512.q8[b].qs[i]) << b << " " << i;
    EXPECT_EQ(std::bit_cast<uint32_t>(scalar.q8_scales[b]),
              std::bit_cast<uint32_t>(avx512.q8_scales[b]))
        << b;
  }
  EXPECT_EQ(scalar.q8_sums, avx512.q8_sums);
  EXPECT_EQ(scalar.q8_half_sums, avx512.q8_half_sums);
}

TEST(QuantizeTest, Q4_0KeepsTheExtremeValueExactlyRepresentable) {
  std::vector<float> x(32, 0.0f);
  x[3] = -4.0f;
  x[20] = 2.0f;
  BlockQ4_0 block;
  QuantizeRow(GgmlType::kQ4_0, x.data(), 32, &block);
  std::vector<float> back(32);
  DequantizeRow(GgmlType::kQ4_0, &block, 32, back.data());
  EXPECT_FLOAT_EQ(back[3], -4.0f);
  EXPECT_FLOAT_EQ(back[20], 2.0f);
  EXPECT_FLOAT_EQ(back[0], 0.0f);
}

TEST(QuantizeTest, Q8_0ZeroBlockStaysZero) {
  std::vector<float> x(32, 0.0f);
  BlockQ8_0 block;
  QuantizeRow(GgmlType::kQ8_0, x.data(), 32, &block);
  std::vector<float> back(32, 1.0f);
  DequantizeRow(GgmlType::kQ8_0, &block, 32, back.data());
  for (float v : back) EXPECT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace vllm::kernels
