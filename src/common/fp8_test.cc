#include "common/fp8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace vllm {
namespace {

// e4m3fn by its definition: (1 + m / 8) · 2^(e − 7), or m / 8 · 2^-6 when e = 0.
double E4m3Value(int code) {
  const int exponent = (code >> 3) & 15, mantissa = code & 7;
  const double magnitude = exponent == 0 ? mantissa / 8.0 * std::ldexp(1.0, -6)
                                         : (1.0 + mantissa / 8.0) * std::ldexp(1.0, exponent - 7);
  return (code & 0x80) != 0 ? -magnitude : magnitude;
}

TEST(Fp8E4m3Test, DecodesEveryFiniteCodeByDefinition) {
  for (int code = 0; code < 256; ++code) {
    if (IsFp8E4m3Nan(static_cast<uint8_t>(code))) continue;
    EXPECT_EQ(DecodeFp8E4m3(static_cast<uint8_t>(code)), E4m3Value(code)) << code;
  }
  EXPECT_TRUE(IsFp8E4m3Nan(0x7f));
  EXPECT_TRUE(IsFp8E4m3Nan(0xff));
  EXPECT_FALSE(IsFp8E4m3Nan(0x7e));
  EXPECT_EQ(DecodeFp8E4m3(0x7e), kFp8E4m3Max);
}

TEST(Fp8E4m3Test, EncodesEveryFiniteValueToItsCode) {
  for (int code = 0; code < 256; ++code) {
    if (IsFp8E4m3Nan(static_cast<uint8_t>(code))) continue;
    EXPECT_EQ(EncodeFp8E4m3(DecodeFp8E4m3(static_cast<uint8_t>(code))), code) << code;
  }
}

TEST(Fp8E4m3Test, RoundsToNearestWithTiesToEvenAndSaturates) {
  // Between neighbours a (code c) and b (code c + 1): below, at and above the midpoint.
  for (int code = 0; code < 0x7e; ++code) {
    const double low = E4m3Value(code), high = E4m3Value(code + 1);
    const auto middle = static_cast<float>((low + high) / 2);
    const int even = code % 2 == 0 ? code : code + 1;
    EXPECT_EQ(EncodeFp8E4m3(middle), even) << code;
    EXPECT_EQ(EncodeFp8E4m3(std::nextafter(middle, 0.0f)), code) << code;
    EXPECT_EQ(EncodeFp8E4m3(std::nextafter(middle, 1000.0f)), code + 1) << code;
    EXPECT_EQ(EncodeFp8E4m3(-middle), even | 0x80) << code;
  }
  EXPECT_EQ(EncodeFp8E4m3(463.0f), 0x7e);
  EXPECT_EQ(EncodeFp8E4m3(1e9f), 0x7e);
  EXPECT_EQ(EncodeFp8E4m3(-1e9f), 0xfe);
  EXPECT_EQ(EncodeFp8E4m3(std::numeric_limits<float>::infinity()), 0x7e);
  EXPECT_EQ(EncodeFp8E4m3(1e-4f), 0x00);  // below half the smallest subnormal, 2^-10
}

}  // namespace
}  // namespace vllm
