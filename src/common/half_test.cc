#include "common/half.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vllm {
namespace {

TEST(HalfTest, Fp16RoundTripsEveryFiniteValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    uint16_t bits = static_cast<uint16_t>(h);
    if ((bits & 0x7c00) == 0x7c00) continue;  // inf / NaN
    EXPECT_EQ(Fp32ToFp16(Fp16ToFp32(bits)), bits) << h;
  }
}

TEST(HalfTest, Fp16RoundsToNearestEven) {
  EXPECT_EQ(Fp16ToFp32(Fp32ToFp16(1.0f + 1.0f / 2048)), 1.0f);  // tie -> even
  EXPECT_EQ(Fp16ToFp32(Fp32ToFp16(1.0f + 3.0f / 2048)), 1.0f + 2.0f / 1024);
  EXPECT_TRUE(std::isinf(Fp16ToFp32(Fp32ToFp16(70000.0f))));
  EXPECT_EQ(Fp16ToFp32(Fp32ToFp16(-2.5f)), -2.5f);
}

TEST(HalfTest, Bf16RoundsToNearestEven) {
  EXPECT_EQ(Bf16ToFp32(Fp32ToBf16(1.0f)), 1.0f);
  EXPECT_EQ(Bf16ToFp32(Fp32ToBf16(1.00390625f)), 1.0f);  // exactly half an ulp -> even
  EXPECT_EQ(Bf16ToFp32(Fp32ToBf16(1.01171875f)), 1.015625f);
  EXPECT_TRUE(std::isnan(Bf16ToFp32(Fp32ToBf16(std::nanf("")))));
}

}  // namespace
}  // namespace vllm
