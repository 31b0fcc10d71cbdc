#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include "common/ggml_type.h"
#include "common/half.h"
#include "kernels/ops.h"
#include "kernels/quant_blocks.h"
#include "kernels/random_values_for_test.h"

namespace vllm::kernels {
namespace {

struct QuantizerCase {
  GgmlType type;
  // Bound on the relative RMS round-trip error of 4096 normal(0, 1) values: about 20% above what
  // these quantizers (and ggml's, byte for byte the same) measure, given in the comments.
  double max_relative_rms_error;
  std::vector<size_t> fp16_scale_offsets;  // the block's fp16 scale fields
  // FNV-1a of LcgValues(1024) as ggml's reference quantizer writes them (quantize_row_*_ref;
  // quantize_iq4_nl without an importance matrix for IQ4_NL); none for Q4_Z, not a ggml type.
  std::optional<uint64_t> ggml_row_digest;
};

const std::vector<QuantizerCase>& Cases() {
  static const auto* const cases = new std::vector<QuantizerCase>{
      // 4 bits per value with min/max scales: 0.077.
      {GgmlType::kQ4_1,
       0.093,
       {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)},
       0x20c1d35b527c0723u},
      // 4 bits with an integer zero point per 32 (the range widened to hold 0): 0.081.
      {GgmlType::kQ4_Z, 0.097, {offsetof(BlockQ4_Z, d)}, std::nullopt},
      // 5 bits: half Q4's step. Symmetric 0.042, with min 0.037.
      {GgmlType::kQ5_0, 0.050, {offsetof(BlockQ5_0, d)}, 0xff6ed13e43df0fbeu},
      {GgmlType::kQ5_1,
       0.045,
       {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)},
       0xf23f278c137d6357u},
      // 2 bits with 4-bit scales and mins per 16: 0.292.
      {GgmlType::kQ2_K,
       0.35,
       {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)},
       0x7f9caef36f301ae9u},
      // 3 bits with 6-bit scales per 16: 0.150.
      {GgmlType::kQ3_K, 0.18, {offsetof(BlockQ3_K, d)}, 0xb241a79803f3a585u},
      // 4 and 5 bits with 6-bit scales and mins per 32: 0.071 and 0.036.
      {GgmlType::kQ4_K,
       0.085,
       {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)},
       0x4f647087d9805c3cu},
      {GgmlType::kQ5_K,
       0.043,
       {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)},
       0x23867cf8af5be14bu},
      // 6 bits with int8 scales per 16: 0.018.
      {GgmlType::kQ6_K, 0.021, {offsetof(BlockQ6_K, d)}, 0xac398c1467f9aba5u},
      // 4-bit non-linear grid, fp16 / 6-bit scales per 32: 0.075 each.
      {GgmlType::kIQ4_NL, 0.090, {offsetof(BlockIq4Nl, d)}, 0xbe03666a633acc93u},
      {GgmlType::kIQ4_XS, 0.091, {offsetof(BlockIq4Xs, d)}, 0xa424990c972d82e4u},
      // E2M1 (1 mantissa bit) with a power-of-two scale per 32: 0.112.
      {GgmlType::kMXFP4, 0.135, {}, 0x5a3c89c8da5db8f4u},
      // E4M3 (3 mantissa bits) with an f32 scale amax / 448 per 32: 0.024.
      {GgmlType::kF8_E4M3_B32, 0.029, {}, std::nullopt},
  };
  return *cases;
}

const char* Name(GgmlType type) { return GetSupportedTypeTraits(type)->name; }

int64_t BlockBytes(GgmlType type) { return GetSupportedTypeTraits(type)->block_bytes; }

// Values in [-4, 4) times 1..5 per block of 32 from a 32-bit LCG: exactly the same on every
// platform (no libm, no std::normal_distribution).
std::vector<float> LcgValues(int64_t n) {
  std::vector<float> x(n);
  uint32_t state = 12345;
  for (int64_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    x[i] = static_cast<float>(static_cast<int32_t>(state) >> 8) / (1 << 21) *
           static_cast<float>(1 + i / 32 % 5);
  }
  return x;
}

uint64_t Fnv1a(const std::vector<uint8_t>& bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (uint8_t byte : bytes) hash = (hash ^ byte) * 1099511628211ull;
  return hash;
}

std::vector<uint8_t> Quantize(GgmlType type, const std::vector<float>& x) {
  std::vector<uint8_t> bytes(RowBytes(*GetSupportedTypeTraits(type), std::ssize(x)));
  QuantizeRow(type, x.data(), std::ssize(x), bytes.data());
  return bytes;
}

std::vector<float> Dequantize(GgmlType type, const std::vector<uint8_t>& bytes, int64_t n) {
  std::vector<float> values(n);
  DequantizeRow(type, bytes.data(), n, values.data());
  return values;
}

// Bit-for-bit equality (a dequantizer's f32 arithmetic is part of the format).
void ExpectBitIdentical(const std::vector<float>& expected, const std::vector<float>& actual) {
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(BitsFromFp32(expected[i]), BitsFromFp32(actual[i]))
        << "element " << i << ": " << expected[i] << " vs " << actual[i];
  }
}

TEST(QuantizersTest, RoundTripErrorStaysWithinEachFormatsBound) {
  const int64_t n = 4096;
  const std::vector<float> x = RandomNormalValues(n, 7);
  for (const QuantizerCase& c : Cases()) {
    SCOPED_TRACE(Name(c.type));
    const std::vector<float> back = Dequantize(c.type, Quantize(c.type, x), n);
    double error = 0.0, norm = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      error += (back[i] - x[i]) * (back[i] - x[i]);
      norm += x[i] * x[i];
    }
    EXPECT_LE(std::sqrt(error / norm), c.max_relative_rms_error);
  }
}

TEST(QuantizersTest, BytesMatchGgmlsReferenceQuantizers) {
  const std::vector<float> x = LcgValues(1024);
  for (const QuantizerCase& c : Cases()) {
    if (!c.ggml_row_digest) continue;
    EXPECT_EQ(Fnv1a(Quantize(c.type, x)), *c.ggml_row_digest) << Name(c.type);
  }
}

// Q4_Z's zero point makes 0 a level of every block: zeros come back exactly, the zero points stay
// in 0..15 and the codes span the block's range.
TEST(QuantizersTest, Q4_ZKeepsZerosExact) {
  std::vector<float> x = RandomNormalValues(kSuperBlockSize, 31);
  for (int64_t i = 32; i < 64; ++i) x[i] = std::fabs(x[i]) + 0.5f;  // a block of 0 and up: z = 0
  for (int64_t i = 0; i < kSuperBlockSize; i += 5) x[i] = 0.0f;
  const std::vector<uint8_t> bytes = Quantize(GgmlType::kQ4_Z, x);
  const auto* blocks = reinterpret_cast<const BlockQ4_Z*>(bytes.data());
  for (int64_t b = 0; b < kSuperBlockSize / kQuantBlockSize; ++b) EXPECT_LE(blocks[b].z, 15);
  EXPECT_EQ(blocks[1].z, 0);
  const std::vector<float> back = Dequantize(GgmlType::kQ4_Z, bytes, kSuperBlockSize);
  for (int64_t i = 0; i < kSuperBlockSize; i += 5) ASSERT_EQ(back[i], 0.0f) << "element " << i;
}

TEST(QuantizersTest, ZeroRowStaysZeroWithFiniteScales) {
  const int64_t n = 2 * kSuperBlockSize;
  const std::vector<float> zeros(n, 0.0f);
  for (const QuantizerCase& c : Cases()) {
    SCOPED_TRACE(Name(c.type));
    const std::vector<uint8_t> bytes = Quantize(c.type, zeros);
    for (size_t block = 0; block < bytes.size(); block += BlockBytes(c.type)) {
      for (size_t offset : c.fp16_scale_offsets) {
        uint16_t half;
        std::memcpy(&half, &bytes[block + offset], sizeof(half));
        EXPECT_EQ(Fp16ToFp32(half), 0.0f) << "block at byte " << block;
      }
      if (c.type == GgmlType::kMXFP4) {
        EXPECT_NE(bytes[block + offsetof(BlockMxfp4, e)], 0xff);  // E8M0 NaN
      }
    }
    for (float v : Dequantize(c.type, bytes, n)) ASSERT_EQ(v, 0.0f);
  }
}

TEST(QuantizersTest, ExtremeMagnitudesDequantizeToFiniteValues) {
  // Per 3 values: ±1e-30, a normal value, ±1e4; one super-block of only ±1e-30; one outlier.
  const int64_t n = 4 * kSuperBlockSize;
  std::vector<float> x = RandomNormalValues(n, 11);
  for (int64_t i = 0; i < n; ++i) {
    const float sign = i % 2 == 0 ? 1.0f : -1.0f;
    if (i % 3 == 0) x[i] = sign * 1e-30f;
    if (i % 3 == 2) x[i] = sign * 1e4f;
    if (i / kSuperBlockSize == 1) x[i] = sign * 1e-30f;
  }
  x[600] = 6e4f;
  for (const QuantizerCase& c : Cases()) {
    SCOPED_TRACE(Name(c.type));
    const std::vector<float> back = Dequantize(c.type, Quantize(c.type, x), n);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_TRUE(std::isfinite(back[i])) << "element " << i;
      if (i / kSuperBlockSize == 1) {
        ASSERT_LE(std::fabs(back[i]), 1e-29f) << "element " << i;
      }
    }
  }
}

// The structural tests decode each K-type block by hand, following quant_blocks.h, and compare
// with DequantizeRow bit for bit. 512 values: two super-blocks.
constexpr int64_t kStructureValues = 2 * kSuperBlockSize;

TEST(QuantizersTest, Q2_KScalesAndMinsUseTheFull4Bits) {
  const std::vector<float> x = RandomNormalValues(kStructureValues, 21);
  const std::vector<uint8_t> bytes = Quantize(GgmlType::kQ2_K, x);
  const auto* blocks = reinterpret_cast<const BlockQ2_K*>(bytes.data());
  std::vector<float> expected(kStructureValues);
  for (int64_t b = 0; b < kStructureValues / kSuperBlockSize; ++b) {
    const BlockQ2_K& block = blocks[b];
    int max_scale = 0, max_min = 0;
    for (uint8_t packed : block.scales) {
      max_scale = std::max(max_scale, packed & 0x0f);
      max_min = std::max(max_min, packed >> 4);
    }
    // The largest sub-block scale and min define d and dmin, so they quantize to 15.
    EXPECT_EQ(max_scale, 15);
    EXPECT_EQ(max_min, 15);
    const float d = Fp16ToFp32(block.d);
    const float dmin = Fp16ToFp32(block.dmin);
    for (int i = 0; i < kSuperBlockSize; ++i) {
      const int q = (block.qs[32 * (i / 128) + i % 32] >> (2 * (i % 128 / 32))) & 3;
      const uint8_t packed = block.scales[i / 16];
      expected[b * kSuperBlockSize + i] = d * (packed & 0x0f) * q - dmin * (packed >> 4);
    }
  }
  ExpectBitIdentical(expected, Dequantize(GgmlType::kQ2_K, bytes, kStructureValues));
}

TEST(QuantizersTest, Q3_KLargestScaleMapsToMinus32) {
  const std::vector<float> x = RandomNormalValues(kStructureValues, 22);
  const std::vector<uint8_t> bytes = Quantize(GgmlType::kQ3_K, x);
  const auto* blocks = reinterpret_cast<const BlockQ3_K*>(bytes.data());
  std::vector<float> expected(kStructureValues);
  for (int64_t b = 0; b < kStructureValues / kSuperBlockSize; ++b) {
    const BlockQ3_K& block = blocks[b];
    int scales[16];
    for (int s = 0; s < 16; ++s) {
      const int low = (block.scales[s % 8] >> (4 * (s / 8))) & 0x0f;
      const int high = (block.scales[8 + s % 4] >> (2 * (s / 4))) & 3;
      scales[s] = (low | (high << 4)) - 32;
    }
    EXPECT_EQ(*std::min_element(scales, scales + 16), -32);
    const float d = Fp16ToFp32(block.d);
    for (int i = 0; i < kSuperBlockSize; ++i) {
      const int low_bits = (block.qs[32 * (i / 128) + i % 32] >> (2 * (i % 128 / 32))) & 3;
      const bool high_bit = (block.hmask[i % 32] >> (i / 32)) & 1;
      expected[b * kSuperBlockSize + i] = d * scales[i / 16] * (low_bits - (high_bit ? 0 : 4));
    }
  }
  ExpectBitIdentical(expected, Dequantize(GgmlType::kQ3_K, bytes, kStructureValues));
}

// Q4_K / Q5_K: sub-block j's 6-bit scale and min, with the largest of each quantized to 63.
void ExpectFull6BitScalesAndMins(const uint8_t* packed, uint8_t* scales, uint8_t* mins) {
  for (int j = 0; j < 8; ++j) {
    UnpackScaleMinK4(j, packed, &scales[j], &mins[j]);
    EXPECT_LT(scales[j], 64);
    EXPECT_LT(mins[j], 64);
  }
  EXPECT_EQ(*std::max_element(scales, scales + 8), 63);
  EXPECT_EQ(*std::max_element(mins, mins + 8), 63);
}

TEST(QuantizersTest, Q4_KScalesAndMinsFit6Bits) {
  const std::vector<float> x = RandomNormalValues(kStructureValues, 23);
  const std::vector<uint8_t> bytes = Quantize(GgmlType::kQ4_K, x);
  const auto* blocks = reinterpret_cast<const BlockQ4_K*>(bytes.data());
  std::vector<float> expected(kStructureValues);
  for (int64_t b = 0; b < kStructureValues / kSuperBlockSize; ++b) {
    const BlockQ4_K& block = blocks[b];
    uint8_t scales[8], mins[8];
    ExpectFull6BitScalesAndMins(block.scales, scales, mins);
    const float d = Fp16ToFp32(block.d);
    const float dmin = Fp16ToFp32(block.dmin);
    for (int i = 0; i < kSuperBlockSize; ++i) {
      const int q = (block.qs[32 * (i / 64) + i % 32] >> (4 * (i % 64 / 32))) & 0x0f;
      expected[b * kSuperBlockSize + i] = d * scales[i / 32] * q - dmin * mins[i / 32];
    }
  }
  ExpectBitIdentical(expected, Dequantize(GgmlType::kQ4_K, bytes, kStructureValues));
}

TEST(QuantizersTest, Q5_KScalesAndMinsFit6Bits) {
  const std::vector<float> x = RandomNormalValues(kStructureValues, 24);
  const std::vector<uint8_t> bytes = Quantize(GgmlType::kQ5_K, x);
  const auto* blocks = reinterpret_cast<const BlockQ5_K*>(bytes.data());
  std::vector<float> expected(kStructureValues);
  for (int64_t b = 0; b < kStructureValues / kSuperBlockSize; ++b) {
    const BlockQ5_K& block = blocks[b];
    uint8_t scales[8], mins[8];
    ExpectFull6BitScalesAndMins(block.scales, scales, mins);
    const float d = Fp16ToFp32(block.d);
    const float dmin = Fp16ToFp32(block.dmin);
    for (int i = 0; i < kSuperBlockSize; ++i) {
      const int low = (block.qs[32 * (i / 64) + i % 32] >> (4 * (i % 64 / 32))) & 0x0f;
      const int fifth = (block.qh[i % 32] >> (2 * (i / 64) + i % 64 / 32)) & 1;
      expected[b * kSuperBlockSize + i] =
          d * scales[i / 32] * (low | (fifth << 4)) - dmin * mins[i / 32];
    }
  }
  ExpectBitIdentical(expected, Dequantize(GgmlType::kQ5_K, bytes, kStructureValues));
}

TEST(QuantizersTest, Q6_KLargestScaleMapsToMinus128) {
  const std::vector<float> x = RandomNormalValues(kStructureValues, 25);
  const std::vector<uint8_t> bytes = Quantize(GgmlType::kQ6_K, x);
  const auto* blocks = reinterpret_cast<const BlockQ6_K*>(bytes.data());
  std::vector<float> expected(kStructureValues);
  for (int64_t b = 0; b < kStructureValues / kSuperBlockSize; ++b) {
    const BlockQ6_K& block = blocks[b];
    EXPECT_EQ(*std::min_element(block.scales, block.scales + 16), -128);
    const float d = Fp16ToFp32(block.d);
    for (int i = 0; i < kSuperBlockSize; ++i) {
      // Quarter k of a 128-value half: low nibbles of ql bytes 0-31 (k = 0) or 32-63 (k = 1),
      // high nibbles for k = 2, 3; bits 2k, 2k + 1 of qh.
      const int half = i / 128, quarter = i % 128 / 32, l = i % 32;
      const int low = (block.ql[64 * half + 32 * (quarter % 2) + l] >> (4 * (quarter / 2))) & 0x0f;
      const int high = (block.qh[32 * half + l] >> (2 * quarter)) & 3;
      expected[b * kSuperBlockSize + i] = d * block.scales[i / 16] * ((low | (high << 4)) - 32);
    }
  }
  ExpectBitIdentical(expected, Dequantize(GgmlType::kQ6_K, bytes, kStructureValues));
}

TEST(QuantizersTest, Iq4XsLargestScaleMapsToMinus32) {
  const std::vector<float> x = RandomNormalValues(kStructureValues, 26);
  const std::vector<uint8_t> bytes = Quantize(GgmlType::kIQ4_XS, x);
  const auto* blocks = reinterpret_cast<const BlockIq4Xs*>(bytes.data());
  std::vector<float> expected(kStructureValues);
  for (int64_t b = 0; b < kStructureValues / kSuperBlockSize; ++b) {
    const BlockIq4Xs& block = blocks[b];
    int scales[8];
    for (int s = 0; s < 8; ++s) {
      const int low = (block.scales_l[s / 2] >> (4 * (s % 2))) & 0x0f;
      const int high = (block.scales_h >> (2 * s)) & 3;
      scales[s] = (low | (high << 4)) - 32;
    }
    EXPECT_EQ(*std::min_element(scales, scales + 8), -32);
    const float d = Fp16ToFp32(block.d);
    for (int i = 0; i < kSuperBlockSize; ++i) {
      const int q = (block.qs[16 * (i / 32) + i % 16] >> (4 * (i % 32 / 16))) & 0x0f;
      expected[b * kSuperBlockSize + i] = d * scales[i / 32] * kIq4NlValues[q];
    }
  }
  ExpectBitIdentical(expected, Dequantize(GgmlType::kIQ4_XS, bytes, kStructureValues));
}

}  // namespace
}  // namespace vllm::kernels
