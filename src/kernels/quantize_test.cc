#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

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
