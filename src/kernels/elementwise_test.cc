#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/ops.h"

namespace vllm::kernels {
namespace {

TEST(ElementwiseTest, GeluTanhMulMatchesTheTanhFormulaInDoublePrecision) {
  const std::vector<float> gate = {-6.0f, -2.5f, -1.0f, -0.1f, 0.0f, 0.3f, 1.0f, 2.0f, 7.5f};
  const std::vector<float> up = {1.5f, -2.0f, 0.5f, 3.0f, 4.0f, -1.0f, 2.0f, 0.25f, -0.5f};
  std::vector<float> out(gate.size());
  GeluTanhMul(gate.data(), up.data(), static_cast<int64_t>(gate.size()), out.data());
  for (size_t i = 0; i < gate.size(); ++i) {
    const double x = gate[i];
    const double gelu =
        0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    EXPECT_NEAR(out[i], gelu * up[i], 1e-6 * (1.0 + std::abs(gelu * up[i]))) << gate[i];
  }
  // gelu(0) = 0, and gelu(x) → x for large x, → 0 for very negative x.
  EXPECT_EQ(out[4], 0.0f);
  EXPECT_NEAR(out[8], 7.5f * -0.5f, 1e-5);
  EXPECT_NEAR(out[0], 0.0f, 1e-6);
}

TEST(ElementwiseTest, GeluTanhMulMayWriteOverItsGateInput) {
  std::vector<float> gate = {-1.0f, 0.5f, 2.0f};
  const std::vector<float> up = {2.0f, 3.0f, -1.0f};
  std::vector<float> expected(gate.size());
  GeluTanhMul(gate.data(), up.data(), 3, expected.data());
  GeluTanhMul(gate.data(), up.data(), 3, gate.data());
  EXPECT_EQ(gate, expected);
}

}  // namespace
}  // namespace vllm::kernels
