// Integer groups become llama.cpp's Q4_0 / Q4_1 / Q8_0 blocks, Q4_Z's (or F16) whose dequantized
// rows are the groups' values: exactly for Q4_0, Q4_Z, Q8_0 and F16 (up to the f16 rounding of each
// value), and up to the f16 rounding of −scale · zero for Q4_1.
#include "model/hf_quant/integer_groups.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/half.h"
#include "model/hf_quant/test_parts.h"

namespace vllm {
namespace {

// Groups of `rows` × `cols` codes in [code_min, code_max] with f16-exact scales and, when
// zero_max >= zero_min, zeros in [zero_min, zero_max].
IntegerGroups RandomGroups(int64_t rows, int64_t cols, int64_t group_size, int code_min,
                           int code_max, int zero_min, int zero_max, uint32_t seed) {
  std::mt19937 rng(seed);
  IntegerGroups groups{.rows = rows, .cols = cols, .group_size = group_size};
  std::uniform_int_distribution<int> code(code_min, code_max);
  for (int64_t i = 0; i < rows * cols; ++i) groups.q.push_back(static_cast<int16_t>(code(rng)));
  std::uniform_real_distribution<float> scale(0.001f, 0.1f);
  const int64_t num_groups = rows * (cols / group_size);
  for (int64_t i = 0; i < num_groups; ++i) {
    groups.scales.push_back(Fp16ToFp32(Fp32ToFp16(scale(rng))));
  }
  if (zero_max >= zero_min) {
    std::uniform_int_distribution<int> zero(zero_min, zero_max);
    for (int64_t i = 0; i < num_groups; ++i)
      groups.zeros.push_back(static_cast<int16_t>(zero(rng)));
  }
  return groups;
}

// W[r][c] by the groups' formula, in f32.
float Formula(const IntegerGroups& groups, int64_t r, int64_t c) {
  const int64_t g = r * (groups.cols / groups.group_size) + c / groups.group_size;
  const int zero = groups.zeros.empty() ? 0 : groups.zeros[g];
  return groups.scales[g] * static_cast<float>(groups.q[r * groups.cols + c] - zero);
}

// Converts `groups`, expects `type`, and compares every value to the formula: exact, rounded to
// f16 (F16), or within Q4_1's rounding of the minimum.
void ExpectConvertsAs(const IntegerGroups& groups, GgmlType type) {
  auto tensor = IntegerGroupsToTensor(groups, "w.weight");
  ASSERT_TRUE(tensor.ok()) << tensor.error();
  EXPECT_EQ(tensor->name, "w.weight");
  ASSERT_EQ(tensor->type, type) << GgmlTypeName(static_cast<uint32_t>(tensor->type));
  EXPECT_EQ(tensor->shape, (std::vector<int64_t>{groups.cols, groups.rows}));
  const std::vector<float> values = test::DequantizeWeight(*tensor);
  for (int64_t r = 0; r < groups.rows; ++r) {
    for (int64_t c = 0; c < groups.cols; ++c) {
      const float want = Formula(groups, r, c);
      const float got = values[r * groups.cols + c];
      if (type == GgmlType::kF16) {
        ASSERT_EQ(got, Fp16ToFp32(Fp32ToFp16(want))) << r << "," << c;
      } else if (type == GgmlType::kQ4_1) {
        const int64_t g = r * (groups.cols / groups.group_size) + c / groups.group_size;
        const float zero_term = groups.scales[g] * (groups.zeros.empty() ? 0 : groups.zeros[g]);
        ASSERT_NEAR(got, want, std::abs(zero_term) * 1e-3f + 1e-7f) << r << "," << c;
      } else {
        ASSERT_EQ(got, want) << r << "," << c;
      }
    }
  }
}

TEST(IntegerGroupsTest, SymmetricFourBitIsExactQ4_0) {
  ExpectConvertsAs(RandomGroups(5, 128, 32, 0, 15, 8, 8, 1), GgmlType::kQ4_0);
  ExpectConvertsAs(RandomGroups(3, 256, 128, 0, 7, 4, 4, 2), GgmlType::kQ4_0);  // 3-bit
  ExpectConvertsAs(RandomGroups(3, 64, 64, -8, 7, 0, -1, 3), GgmlType::kQ4_0);  // signed, no zeros
  ExpectConvertsAs(RandomGroups(2, 64, 64, 0, 3, 1, 3, 4), GgmlType::kQ4_0);    // 2-bit asym
}

TEST(IntegerGroupsTest, AsymmetricFourBitIsExactQ4_Z) {
  ExpectConvertsAs(RandomGroups(4, 256, 64, 0, 15, 0, 15, 5), GgmlType::kQ4_Z);   // AWQ
  ExpectConvertsAs(RandomGroups(4, 128, 128, 0, 15, 1, 16, 6), GgmlType::kQ4_Z);  // GPTQ v1
  ExpectConvertsAs(RandomGroups(2, 64, 32, 0, 15, 0, 31, 13), GgmlType::kQ4_Z);
}

TEST(IntegerGroupsTest, FourBitCodesWithZerosBeyondQ4_ZAreQ4_1) {
  ExpectConvertsAs(RandomGroups(4, 128, 64, 0, 15, 20, 40, 14), GgmlType::kQ4_1);
  ExpectConvertsAs(RandomGroups(2, 64, 32, 0, 15, -3, 10, 15), GgmlType::kQ4_1);
}

TEST(IntegerGroupsTest, EightBitIsExactQ8_0) {
  ExpectConvertsAs(RandomGroups(3, 256, 128, 0, 255, 128, 128, 7), GgmlType::kQ8_0);
  ExpectConvertsAs(RandomGroups(3, 96, 96, -128, 127, 0, -1, 8), GgmlType::kQ8_0);
  ExpectConvertsAs(RandomGroups(3, 64, 32, 20, 200, 80, 140, 9), GgmlType::kQ8_0);
}

TEST(IntegerGroupsTest, FallsBackToF16) {
  // A group size that is not a multiple of 32.
  ExpectConvertsAs(RandomGroups(3, 48, 16, 0, 15, 8, 8, 10), GgmlType::kF16);
  // q − zero outside int8.
  ExpectConvertsAs(RandomGroups(3, 128, 64, 0, 255, 0, 255, 11), GgmlType::kF16);
}

TEST(IntegerGroupsTest, InconsistentSizesAreErrorsNamingTheTensor) {
  const IntegerGroups good = RandomGroups(2, 64, 32, 0, 15, 8, 8, 12);
  const auto expect_error = [](const IntegerGroups& groups, const std::string& what) {
    auto tensor = IntegerGroupsToTensor(groups, "layer.weight");
    ASSERT_FALSE(tensor.ok());
    EXPECT_NE(tensor.error().find("'layer.weight'"), std::string::npos) << tensor.error();
    EXPECT_NE(tensor.error().find(what), std::string::npos) << tensor.error();
  };
  IntegerGroups bad = good;
  bad.group_size = 48;
  expect_error(bad, "does not divide");
  bad = good;
  bad.group_size = 0;
  expect_error(bad, "does not divide");
  bad = good;
  bad.q.pop_back();
  expect_error(bad, "q has 127 values, expected 128");
  bad = good;
  bad.scales.push_back(1.0f);
  expect_error(bad, "scales has 5 values, expected 4");
  bad = good;
  bad.zeros.resize(2);
  expect_error(bad, "zeros has 2 values, expected 4");
}

}  // namespace
}  // namespace vllm
