#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "common/cpu_features.h"
#include "kernels/cpu/exp_polynomial.h"
#include "kernels/isa.h"
#include "kernels/linear_internal.h"
#include "kernels/ops.h"
#include "kernels/random_values_for_test.h"

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

// The AMX softmax's 2^f = 1 + f q(f) on [0, 1], evaluated with fused multiply-adds as there.
TEST(ElementwiseTest, Exp2PolynomialIsWithin3e6OfTwoToTheF) {
  double worst = 0.0;
  for (int i = 0; i <= 1 << 20; ++i) {
    const float f = static_cast<float>(i) / (1 << 20);
    float q = kExp2Coefficients[0];
    for (int k = 1; k < kNumExp2Coefficients; ++k) q = std::fma(q, f, kExp2Coefficients[k]);
    worst = std::max(worst, std::abs(std::fma(q, f, 1.0f) / std::exp2(double{f}) - 1.0));
  }
  EXPECT_LT(worst, 3.0e-6);
}

TEST(ElementwiseTest, GeluTanhMulMayWriteOverItsGateInput) {
  std::vector<float> gate = {-1.0f, 0.5f, 2.0f};
  const std::vector<float> up = {2.0f, 3.0f, -1.0f};
  std::vector<float> expected(gate.size());
  GeluTanhMul(gate.data(), up.data(), 3, expected.data());
  GeluTanhMul(gate.data(), up.data(), 3, gate.data());
  EXPECT_EQ(gate, expected);
}

using GatedMul = void (*)(const float*, const float*, int64_t, float*);

// silu(x) and gelu_tanh(x) in double precision, each x · sigmoid(k(x)).
double SiluArgument(double x) { return x; }
double GeluTanhArgument(double x) {
  return 2.0 * std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
}
double SiluExact(double x) { return x / (1.0 + std::exp(-SiluArgument(x))); }
// 0.5 x (1 + tanh(y)) written as x · sigmoid(2y), which keeps its digits for very negative x.
double GeluTanhExact(double x) { return x / (1.0 + std::exp(-GeluTanhArgument(x))); }

// The vector paths this CPU runs, with the activation's kernel on each.
std::vector<std::pair<const char*, GatedMul>> VectorPaths(GatedMul avx2, GatedMul avx512,
                                                          GatedMul neon) {
  std::vector<std::pair<const char*, GatedMul>> paths;
  if (GetCpuFeatures().HasAvx2Path()) paths.push_back({"avx2", avx2});
  if (BestIsa() == Isa::kAvx512) paths.push_back({"avx512", avx512});
  if (GetCpuFeatures().neon) paths.push_back({"neon", neon});
  return paths;
}

// Every path (the scalar one unless null) agrees with the formula in double precision, over the
// range that matters and far beyond it, at every tail length: to a few float ulps, plus what
// rounding k(x) to float costs e^-k (a relative error of about |k| ulps).
void ExpectPathsMatch(GatedMul scalar, GatedMul avx2, GatedMul avx512, GatedMul neon,
                      double (*exact)(double), double (*argument)(double)) {
  std::vector<float> gate;
  for (float x = -120.0f; x <= 120.0f; x += 0.37f) gate.push_back(x);
  for (float x = -3.0f; x <= 3.0f; x += 0.0031f) gate.push_back(x);
  gate.insert(gate.end(), {0.0f, -0.0f, 1e-30f, -1e-30f, 1e30f, 88.5f, -88.5f, 103.0f});
  std::vector<float> up(gate.size());
  for (size_t i = 0; i < up.size(); ++i) up[i] = 0.5f + static_cast<float>(i % 7) * 0.25f;
  std::vector<std::pair<const char*, GatedMul>> paths = VectorPaths(avx2, avx512, neon);
  if (scalar != nullptr) paths.push_back({"scalar", scalar});
  for (const auto& [name, kernel] : paths) {
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{17}, static_cast<int64_t>(gate.size())}) {
      std::vector<float> out(n);
      kernel(gate.data(), up.data(), n, out.data());
      for (int64_t i = 0; i < n; ++i) {
        const double expected = exact(gate[i]) * up[i];
        const double relative = 2e-6 + 5e-7 * std::abs(argument(gate[i]));
        EXPECT_NEAR(out[i], expected, relative * std::abs(expected) + 1e-30)
            << name << " x = " << gate[i] << " n = " << n;
      }
    }
  }
}

// RmsNorm on AVX-512 gives the scalar path's bits: rows of every tail length mod 8 and 16, values
// spread over many magnitudes, in place too.
TEST(ElementwiseTest, RmsNormAvx512EqualsTheScalarPathBitwise) {
  if (BestIsa() != Isa::kAvx512) GTEST_SKIP() << "no AVX-512 VNNI / BF16 on this CPU";
  for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 64, 2048, 2050}) {
    constexpr int64_t kRows = 3;
    std::vector<float> x = RandomNormalValues(kRows * n, static_cast<uint32_t>(n));
    for (int64_t i = 0; i < kRows * n; ++i) x[i] = std::ldexp(x[i], static_cast<int>(i % 41) - 20);
    const std::vector<float> weight = RandomNormalValues(n, 99);
    std::vector<float> scalar(kRows * n), vector(kRows * n);
    RmsNormScalar(x.data(), weight.data(), kRows, n, 1e-6f, scalar.data());
    RmsNormAvx512(x.data(), weight.data(), kRows, n, 1e-6f, vector.data());
    ASSERT_EQ(std::memcmp(scalar.data(), vector.data(), scalar.size() * sizeof(float)), 0)
        << "n = " << n;
    RmsNormAvx512(x.data(), weight.data(), kRows, n, 1e-6f, x.data());
    ASSERT_EQ(std::memcmp(scalar.data(), x.data(), scalar.size() * sizeof(float)), 0)
        << "in place, n = " << n;
  }
}

TEST(ElementwiseTest, SiluMulPathsMatchTheFormula) {
  ExpectPathsMatch(SiluMulScalar, SiluMulAvx2, SiluMulAvx512, SiluMulNeon, SiluExact, SiluArgument);
}

TEST(ElementwiseTest, GeluTanhMulVectorPathsMatchTheFormula) {
  // The scalar reference's 1 + tanh(y) loses digits for very negative x, where the vector paths'
  // x · sigmoid(2y) does not; compare the vector paths with the formula there.
  ExpectPathsMatch(nullptr, GeluTanhMulAvx2, GeluTanhMulAvx512, GeluTanhMulNeon, GeluTanhExact,
                   GeluTanhArgument);
}

// gelu(x) = x / 2 · erfc(-x / sqrt(2)) in double: every path within A&S 7.1.26's absolute error
// on erf (1.5e-7, times |x| / 2) plus a few ulps, at every tail length, in place too.
TEST(ElementwiseTest, GeluErfPathsMatchTheFormula) {
  std::vector<float> x;
  for (float v = -120.0f; v <= 120.0f; v += 0.37f) x.push_back(v);
  for (float v = -6.0f; v <= 6.0f; v += 0.0031f) x.push_back(v);
  x.insert(x.end(), {0.0f, -0.0f, 1e-30f, -1e-30f, 1e30f, -1e30f});
  using Gelu = void (*)(const float*, int64_t, float*);
  std::vector<std::pair<const char*, Gelu>> paths = {{"scalar", GeluErfScalar},
                                                     {"dispatched", GeluErf}};
  if (GetCpuFeatures().HasAvx2Path()) paths.push_back({"avx2", GeluErfAvx2});
  if (BestIsa() == Isa::kAvx512) paths.push_back({"avx512", GeluErfAvx512});
  if (GetCpuFeatures().neon) paths.push_back({"neon", GeluErfNeon});
  for (const auto& [name, kernel] : paths) {
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{17}, static_cast<int64_t>(x.size())}) {
      std::vector<float> out(n);
      kernel(x.data(), n, out.data());
      std::vector<float> in_place(x.begin(), x.begin() + n);
      kernel(in_place.data(), n, in_place.data());
      EXPECT_EQ(in_place, out) << name;
      for (int64_t i = 0; i < n; ++i) {
        const double v = x[i];
        const double expected = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
        EXPECT_NEAR(out[i], expected, 1e-7 * std::abs(v) + 1e-6 * std::abs(expected) + 1e-30)
            << name << " x = " << x[i] << " n = " << n;
      }
    }
  }
  float zero = 0.0f;
  GeluErf(&zero, 1, &zero);
  EXPECT_EQ(zero, 0.0f);
}

TEST(ElementwiseTest, ActivationsPassNanThroughAndReachTheirLimits) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float gate[] = {nan, inf, -1000.0f, 1000.0f};
  const float up[] = {1.0f, 1.0f, 1.0f, 1.0f};
  for (const auto& [name, kernel] : VectorPaths(SiluMulAvx2, SiluMulAvx512, SiluMulNeon)) {
    float out[4];
    kernel(gate, up, 4, out);
    EXPECT_TRUE(std::isnan(out[0])) << name;
    EXPECT_EQ(out[1], inf) << name;
    EXPECT_NEAR(out[2], 0.0f, 1e-30f) << name;
    EXPECT_EQ(out[3], 1000.0f) << name;
  }
}

// The vector paths (one loop over any vector width, activations_lanes.h) compute each lane from its
// own inputs only, so a row's first n outputs have the same bits whether the call covers n values
// (the last ones through the partial loads and stores) or the whole row, and nothing past n is
// written.
TEST(ElementwiseTest, ActivationTailsEqualTheWholeRowBitwiseAndWriteNothingPastIt) {
  constexpr int64_t kRow = 40;
  std::vector<float> gate(kRow), up(kRow);
  for (int64_t i = 0; i < kRow; ++i) {
    gate[i] = -5.0f + 0.27f * static_cast<float>(i);
    up[i] = 0.5f + 0.125f * static_cast<float>(i % 5);
  }
  std::vector<std::pair<const char*, GatedMul>> paths;
  for (auto [name, kernel] : VectorPaths(SiluMulAvx2, SiluMulAvx512, SiluMulNeon))
    paths.push_back({name, kernel});
  for (auto [name, kernel] : VectorPaths(GeluTanhMulAvx2, GeluTanhMulAvx512, GeluTanhMulNeon)) {
    paths.push_back({name, kernel});
  }
  for (auto [name, kernel] : VectorPaths(
           [](const float*x, const float*, int64_t n, float*out) { GeluErfAvx2(x, n, out); },
           [](const float*x, const float*, int64_t n, float*out) { GeluErfAvx512(x, n, out); },
           [](const float*x, const float*, int64_t n, float*out) { GeluErfNeon(x, n, out); })) {
    paths.push_back({name, kernel});
  }
  for (const auto& [name, kernel] : paths) {
    std::vector<float> whole(kRow);
    kernel(gate.data(), up.data(), kRow, whole.data());
    for (int64_t n = 1; n < kRow; ++n) {
      std::vector<float> out(kRow, 12345.0f);
      kernel(gate.data(), up.data(), n, out.data());
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(whole[i]))
            << name << " n = " << n << " at " << i;
      }
      for (int64_t i = n; i < kRow; ++i) ASSERT_EQ(out[i], 12345.0f) << name << " n = " << n;
    }
  }
}

}  // namespace
}  // namespace vllm::kernels
