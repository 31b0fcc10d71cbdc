// quant_method fp8 weights stay 8-bit as F8_E4M3_B32 (e4m3 · scale in f32, as vLLM dequantizes)
// where every 32 values of a row share a scale, else become BF16 equal to e4m3 · scale rounded
// once; per tensor, per row, per block and when quantized at load; malformed parts are errors
// naming the tensor.
#include "common/fp8.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "common/half.h"
#include "model/hf_quant/quantized_linear.h"
#include "model/hf_quant/test_parts.h"

namespace vllm {
namespace {

using test::DequantizeWeight;
using test::ExpectErrorMentions;
using test::LayerParts;

const char* kModule = "model.layers.0.mlp.up_proj";

// `p` rounded once to bf16, nearest even (normal range): 8 significant bits.
float RoundToBf16(double p) {
  if (p == 0.0) return 0.0f;
  int exponent = 0;
  const double mantissa = std::frexp(p, &exponent);  // [0.5, 1)
  return static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(mantissa, 8)), exponent - 8));
}

// Random finite e4m3 codes, every one of the 254 appearing in each 254 values.
std::vector<uint8_t> FiniteCodes(int64_t count, uint32_t seed) {
  std::vector<uint8_t> finite;
  for (int code = 0; code < 256; ++code) {
    if (!IsFp8E4m3Nan(static_cast<uint8_t>(code))) finite.push_back(static_cast<uint8_t>(code));
  }
  std::mt19937 rng(seed);
  std::vector<uint8_t> codes;
  while (static_cast<int64_t>(codes.size()) < count) {
    std::shuffle(finite.begin(), finite.end(), rng);
    codes.insert(codes.end(), finite.begin(), finite.end());
  }
  codes.resize(count);
  return codes;
}

std::vector<float> RandomScales(int64_t count, uint32_t seed) {
  return test::UniformRandom(count, 1e-4f, 1e-1f, seed);
}

// What whole blocks of 32 sharing a scale load as (fp8.cc): F8_E4M3_B32 where this CPU has its
// packed kernels, else BF16.
GgmlType EightBitType() {
  return kernels::HasPackedKernels(GgmlType::kF8_E4M3_B32) ? GgmlType::kF8_E4M3_B32
                                                           : GgmlType::kBF16;
}

// Expects `linear` to be `type` [rows, cols] with W[r][c] = e4m3 · scale_of(r, c): for BF16 the
// exact product rounded once, for F8_E4M3_B32 the f32 product (vLLM's dequantization) bit for bit.
template <typename ScaleOf>
void ExpectProducts(const Expected<ConvertedLinear>& linear, GgmlType type,
                    const std::vector<uint8_t>& codes, int64_t rows, int64_t cols,
                    ScaleOf scale_of) {
  ASSERT_TRUE(linear.ok()) << linear.error();
  EXPECT_EQ(linear->weight.name, std::string(kModule) + ".weight");
  ASSERT_EQ(linear->weight.type, type);
  EXPECT_EQ(linear->weight.shape, (std::vector<int64_t>{cols, rows}));
  EXPECT_TRUE(linear->input_order.empty());
  const std::vector<float> values = DequantizeWeight(linear->weight);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const float code = DecodeFp8E4m3(codes[r * cols + c]);
      const float expected = type == GgmlType::kBF16
                                 ? RoundToBf16(static_cast<double>(code) * scale_of(r, c))
                                 : code * scale_of(r, c);
      if (type == GgmlType::kBF16) {
        ASSERT_EQ(values[r * cols + c], expected) << r << "," << c;  // either zero's sign
      } else {
        ASSERT_EQ(BitsFromFp32(values[r * cols + c]), BitsFromFp32(expected)) << r << "," << c;
      }
    }
  }
}

TEST(Fp8LinearTest, PerTensorScaleGivesEachProductRoundedOnceToBf16) {
  const int64_t rows = 8, cols = 254;
  const std::vector<uint8_t> codes = FiniteCodes(rows * cols, 1);
  // Random scales, and scales whose products with 1.125 or 1.625 round in f32 onto a bf16 tie
  // (0x1.009d8ap-1 · 1.625 lies just above 0x1.a1p-1): rounding through f32 gets those wrong.
  std::vector<float> scales = RandomScales(8, 2);
  scales.insert(scales.end(), {0x1.009d8ap-1f, 0x1.02aaaap-1f, 0x1.0471c8p-1f});
  for (float scale : scales) {
    LayerParts parts(kModule);
    parts.Add("weight", "F8_E4M3", {rows, cols}, codes);
    parts.Add("weight_scale", "F32", {}, std::vector<float>{scale});
    parts.Add("input_scale", "F32", {1}, std::vector<float>{0.5f});
    ExpectProducts(ConvertFp8Linear(Fp8Config{.dynamic_activations = false}, parts.layer()),
                   GgmlType::kBF16, codes, rows, cols, [&](int64_t, int64_t) { return scale; });
  }
}

TEST(Fp8LinearTest, PerRowBf16Scales) {
  const int64_t rows = 6, cols = 64;
  const std::vector<uint8_t> codes = FiniteCodes(rows * cols, 3);
  std::vector<uint16_t> scale_bits;
  for (float scale : RandomScales(rows, 4)) scale_bits.push_back(Fp32ToBf16(scale));
  LayerParts parts(kModule);
  parts.Add("weight", "F8_E4M3", {rows, cols}, codes);
  parts.Add("weight_scale", "BF16", {rows, 1}, scale_bits);
  ExpectProducts(ConvertFp8Linear(Fp8Config{}, parts.layer()), EightBitType(), codes, rows, cols,
                 [&](int64_t r, int64_t) { return Bf16ToFp32(scale_bits[r]); });
}

TEST(Fp8LinearTest, BlockScalesCoverPartialEdgeBlocks) {
  const int64_t rows = 5, cols = 7, block_rows = 2, block_cols = 3;  // 3 × 3 blocks
  const std::vector<uint8_t> codes = FiniteCodes(rows * cols, 5);
  const std::vector<float> scales = RandomScales(9, 6);
  LayerParts parts(kModule);
  parts.Add("weight", "F8_E4M3", {rows, cols}, codes);
  parts.Add("weight_scale_inv", "F32", {3, 3}, scales);
  const Fp8Config config{.weight_block_size = {block_rows, block_cols}};
  ExpectProducts(
      ConvertFp8Linear(config, parts.layer()), GgmlType::kBF16, codes, rows, cols,
      [&](int64_t r, int64_t c) { return scales[(r / block_rows) * 3 + c / block_cols]; });
}

// DeepSeek-V3 / Qwen3-FP8 blocks of 128 × 128 (a partial last block row): each 32 values of a
// row lie in one block, so the codes stay 8-bit with that block's scale.
TEST(Fp8LinearTest, BlocksOf128StayEightBitWithTheirBlocksScale) {
  const int64_t rows = 200, cols = 384;  // 2 × 3 blocks
  const std::vector<uint8_t> codes = FiniteCodes(rows * cols, 8);
  const std::vector<float> scales = RandomScales(6, 9);
  LayerParts parts(kModule);
  parts.Add("weight", "F8_E4M3", {rows, cols}, codes);
  parts.Add("weight_scale_inv", "F32", {2, 3}, scales);
  const Fp8Config config{.weight_block_size = {128, 128}};
  auto linear = ConvertFp8Linear(config, parts.layer());
  ExpectProducts(linear, EightBitType(), codes, rows, cols,
                 [&](int64_t r, int64_t c) { return scales[(r / 128) * 3 + c / 128]; });
  ASSERT_TRUE(linear.ok());
  const int64_t bytes_per_32 = EightBitType() == GgmlType::kF8_E4M3_B32 ? 36 : 64;
  EXPECT_EQ(std::ssize(linear->weight.bytes), rows * cols / 32 * bytes_per_32);  // 1.125 a value
}

TEST(Fp8LinearTest, PerTensorScaleOnWholeBlocksStaysEightBit) {
  const int64_t rows = 3, cols = 512;
  const std::vector<uint8_t> codes = FiniteCodes(rows * cols, 10);
  LayerParts parts(kModule);
  parts.Add("weight", "F8_E4M3", {rows, cols}, codes);
  parts.Add("weight_scale", "F32", {}, std::vector<float>{0x1.009d8ap-1f});
  ExpectProducts(ConvertFp8Linear(Fp8Config{}, parts.layer()), EightBitType(), codes, rows, cols,
                 [&](int64_t, int64_t) { return 0x1.009d8ap-1f; });
}

TEST(Fp8LinearTest, QuantizeAtLoadUsesOneScaleAndNearestCodes) {
  const int64_t rows = 4, cols = 96;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<uint16_t> weight_bits(rows * cols);
  float max_magnitude = 0.0f;
  for (uint16_t& bits : weight_bits) {
    bits = Fp32ToBf16(normal(rng));
    max_magnitude = std::max(max_magnitude, std::fabs(Bf16ToFp32(bits)));
  }
  LayerParts parts(kModule);
  parts.Add("weight", "BF16", {rows, cols}, weight_bits);
  auto linear = ConvertFp8Linear(Fp8Config{.quantize_at_load = true}, parts.layer());
  // The nearest e4m3 value of w / scale by search over every finite code (ties: even code).
  const float scale = max_magnitude / 448.0f;
  std::vector<uint8_t> codes(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) {
    const float target = Bf16ToFp32(weight_bits[i]) / scale;
    int best = 0;
    for (int code = 1; code < 256; ++code) {
      if (IsFp8E4m3Nan(static_cast<uint8_t>(code))) continue;
      const double distance = std::fabs(DecodeFp8E4m3(code) - target);
      const double best_distance = std::fabs(DecodeFp8E4m3(best) - target);
      if (distance < best_distance || (distance == best_distance && code % 2 == 0)) best = code;
    }
    codes[i] = static_cast<uint8_t>(best);
  }
  ExpectProducts(linear, EightBitType(), codes, rows, cols,
                 [&](int64_t, int64_t) { return scale; });
  // The largest magnitude maps to ±448 exactly.
  EXPECT_NE(std::find_if(codes.begin(), codes.end(), [](uint8_t c) { return (c & 0x7f) == 0x7e; }),
            codes.end());
}

TEST(Fp8LinearTest, MalformedPartsAreErrorsNamingTheTensor) {
  const std::string weight = std::string(kModule) + ".weight";
  const std::string scale = std::string(kModule) + ".weight_scale";
  const auto layer_with = [&](uint8_t code, std::vector<int64_t> scale_shape, int64_t bytes) {
    auto parts = std::make_unique<LayerParts>(kModule);
    std::vector<uint8_t> codes(4 * 8, 0x38);  // 1.0
    codes[13] = code;
    parts->Add("weight", "F8_E4M3", {4, 8}, codes, bytes);
    int64_t count = 1;
    for (int64_t size : scale_shape) count *= size;
    parts->Add("weight_scale", "F32", scale_shape, std::vector<float>(count, 0.5f));
    return parts;
  };
  ExpectErrorMentions(ConvertFp8Linear({}, layer_with(0x7f, {1}, -1)->layer()),
                      {weight, "NaN", "[1, 5]"});
  ExpectErrorMentions(ConvertFp8Linear({}, layer_with(0xff, {1}, -1)->layer()), {weight, "NaN"});
  ExpectErrorMentions(ConvertFp8Linear({}, layer_with(0x38, {4, 2}, -1)->layer()),
                      {scale, "[4, 2]"});
  ExpectErrorMentions(ConvertFp8Linear({}, layer_with(0x38, {1}, 31)->layer()), {weight, "31"});
  ExpectErrorMentions(
      ConvertFp8Linear(Fp8Config{.weight_block_size = {2, 4}}, layer_with(0x38, {1}, -1)->layer()),
      {std::string(kModule) + ".weight_scale_inv", "missing"});

  // The same on the 8-bit path (whole blocks of 32): the first NaN in row order, named.
  std::vector<uint8_t> codes(2 * 64, 0x38);
  codes[100] = 0xff;
  codes[120] = 0x7f;
  LayerParts nan_in_blocks(kModule);
  nan_in_blocks.Add("weight", "F8_E4M3", {2, 64}, codes);
  nan_in_blocks.Add("weight_scale", "F32", {1}, std::vector<float>{0.5f});
  ExpectErrorMentions(ConvertFp8Linear({}, nan_in_blocks.layer()),
                      {weight, "NaN (0xff)", "[1, 36]"});

  LayerParts blocks(kModule);
  blocks.Add("weight", "F8_E4M3", {4, 8}, std::vector<uint8_t>(32, 0x38));
  blocks.Add("weight_scale_inv", "F32", {2, 1}, std::vector<float>(2, 1.0f));
  ExpectErrorMentions(ConvertFp8Linear(Fp8Config{.weight_block_size = {2, 4}}, blocks.layer()),
                      {std::string(kModule) + ".weight_scale_inv", "[2, 1]", "[2, 2]"});

  LayerParts nan_scale(kModule);
  nan_scale.Add("weight", "F8_E4M3", {4, 8}, std::vector<uint8_t>(32, 0x38));
  nan_scale.Add("weight_scale", "F32", {1}, std::vector<float>{NAN});
  ExpectErrorMentions(ConvertFp8Linear({}, nan_scale.layer()), {scale, "non-finite"});

  LayerParts bad_input_scale(kModule);
  bad_input_scale.Add("weight", "F8_E4M3", {4, 8}, std::vector<uint8_t>(32, 0x38));
  bad_input_scale.Add("weight_scale", "F32", {1}, std::vector<float>{1.0f});
  bad_input_scale.Add("input_scale", "F32", {1}, std::vector<float>{-1.0f});
  ExpectErrorMentions(ConvertFp8Linear({}, bad_input_scale.layer()),
                      {std::string(kModule) + ".input_scale", "positive"});

  LayerParts unquantized(kModule);
  unquantized.Add("weight", "BF16", {4, 8}, std::vector<uint16_t>(32, 0x3f80));
  ExpectErrorMentions(ConvertFp8Linear({}, unquantized.layer()), {weight, "BF16", "F8_E4M3"});

  LayerParts e5m2(kModule);
  e5m2.Add("weight", "F8_E5M2", {4, 8}, std::vector<uint8_t>(32, 0x3c));
  e5m2.Add("weight_scale", "F32", {1}, std::vector<float>{1.0f});
  ExpectErrorMentions(ConvertFp8Linear({}, e5m2.layer()), {weight, "F8_E5M2"});
}

}  // namespace
}  // namespace vllm
