// compressed-tensors linears dequantize to the formats' formulas: int-quantized (W8A8, W8A16,
// asymmetric groups), pack-quantized 4 / 8 bits (symmetric, with packed zero points, actorder),
// float-quantized FP8 and naive-quantized; malformed parts are errors naming the tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "common/fp8.h"
#include "common/half.h"
#include "model/hf_quant/quantized_linear.h"
#include "model/hf_quant/test_parts.h"

namespace vllm {
namespace {

using test::DequantizeWeight;
using test::ExpectErrorMentions;
using test::LayerParts;

const char* kModule = "model.layers.1.self_attn.o_proj";

std::string Part(const std::string& suffix) { return std::string(kModule) + "." + suffix; }

// bf16 scales in [0.001, 0.1): exact in the f16 of the kernel blocks.
std::vector<uint16_t> RandomBf16Scales(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(0.001f, 0.1f);
  std::vector<uint16_t> bits(count);
  for (uint16_t& b : bits) b = Fp32ToBf16(scale(rng));
  return bits;
}

// Unsigned `bits`-bit codes [outer, inner] packed 32 / bits per int32 along inner, code j of a
// word at bits · j: [outer, inner · bits / 32].
std::vector<int32_t> PackAlongInner(const std::vector<int>& codes, int64_t outer, int64_t inner,
                                    int bits) {
  const int64_t per_word = 32 / bits, words = inner / per_word;
  std::vector<int32_t> packed(outer * words, 0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const auto code = static_cast<uint32_t>(codes[o * inner + i]);
      uint32_t word = static_cast<uint32_t>(packed[o * words + i / per_word]);
      word |= code << (bits * (i % per_word));
      packed[o * words + i / per_word] = static_cast<int32_t>(word);
    }
  }
  return packed;
}

CtScheme Scheme(int bits, const std::string& strategy, int64_t group_size = 0,
                bool symmetric = true) {
  return CtScheme{.targets = {"Linear"},
                  .weights = {.num_bits = bits,
                              .type = "int",
                              .symmetric = symmetric,
                              .strategy = strategy,
                              .group_size = group_size}};
}

// Expects `linear` to be `type` with W[r][c] = want(r, c), exactly (tolerance 0) or within it.
template <typename Want>
void ExpectWeight(const Expected<ConvertedLinear>& linear, GgmlType type, int64_t rows,
                  int64_t cols, Want want, float tolerance = 0.0f) {
  ASSERT_TRUE(linear.ok()) << linear.error();
  EXPECT_EQ(linear->weight.name, Part("weight"));
  ASSERT_EQ(linear->weight.type, type) << GgmlTypeName(static_cast<uint32_t>(linear->weight.type));
  ASSERT_EQ(linear->weight.shape, (std::vector<int64_t>{cols, rows}));
  const std::vector<float> values = DequantizeWeight(linear->weight);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (tolerance == 0.0f) {
        ASSERT_EQ(values[r * cols + c], want(r, c)) << r << "," << c;
      } else {
        ASSERT_NEAR(values[r * cols + c], want(r, c), tolerance) << r << "," << c;
      }
    }
  }
}

TEST(CompressedTensorsLinearTest, IntQuantizedW8A8PerChannel) {
  const int64_t rows = 4, cols = 64;
  const std::vector<int> q = test::UniformRandom(rows * cols, -128, 127, 1);
  const std::vector<uint16_t> scales = RandomBf16Scales(rows, 2);
  LayerParts parts(kModule);
  parts.Add("weight", "I8", {rows, cols}, std::vector<int8_t>(q.begin(), q.end()));
  parts.Add("weight_scale", "BF16", {rows, 1}, scales);
  CtScheme scheme = Scheme(8, "channel");
  scheme.input_activations = CtQuantArgs{.strategy = "token", .dynamic = true};
  ExpectWeight(ConvertCompressedTensorsLinear(scheme, "int-quantized", parts.layer()),
               GgmlType::kQ8_0, rows, cols,
               [&](int64_t r, int64_t c) { return Bf16ToFp32(scales[r]) * q[r * cols + c]; });
}

TEST(CompressedTensorsLinearTest, IntQuantizedPerTensorWithStaticInputScale) {
  const int64_t rows = 3, cols = 32;
  const std::vector<int> q = test::UniformRandom(rows * cols, -128, 127, 3);
  LayerParts parts(kModule);
  parts.Add("weight", "I8", {rows, cols}, std::vector<int8_t>(q.begin(), q.end()));
  parts.Add("weight_scale", "F32", {1}, std::vector<float>{0.03125f});
  parts.Add("input_scale", "F32", {1}, std::vector<float>{0.02f});
  CtScheme scheme = Scheme(8, "tensor");
  scheme.input_activations = CtQuantArgs{.strategy = "tensor", .dynamic = false};
  ExpectWeight(ConvertCompressedTensorsLinear(scheme, "int-quantized", parts.layer()),
               GgmlType::kQ8_0, rows, cols,
               [&](int64_t r, int64_t c) { return 0.03125f * q[r * cols + c]; });

  parts.Add("input_scale", "F32", {1}, std::vector<float>{0.0f});
  ExpectErrorMentions(ConvertCompressedTensorsLinear(scheme, "int-quantized", parts.layer()),
                      {Part("input_scale"), "positive"});
}

TEST(CompressedTensorsLinearTest, IntQuantizedAsymmetricGroups) {
  const int64_t rows = 2, cols = 64, group = 32;
  const std::vector<int> q = test::UniformRandom(rows * cols, -60, 60, 4);
  const std::vector<int> zeros = test::UniformRandom(rows * 2, -60, 60, 5);
  const std::vector<uint16_t> scales = RandomBf16Scales(rows * 2, 6);
  LayerParts parts(kModule);
  parts.Add("weight", "I8", {rows, cols}, std::vector<int8_t>(q.begin(), q.end()));
  parts.Add("weight_scale", "BF16", {rows, 2}, scales);
  parts.Add("weight_zero_point", "I8", {rows, 2}, std::vector<int8_t>(zeros.begin(), zeros.end()));
  ExpectWeight(ConvertCompressedTensorsLinear(Scheme(8, "group", group, false), "int-quantized",
                                              parts.layer()),
               GgmlType::kQ8_0, rows, cols, [&](int64_t r, int64_t c) {
                 const int64_t g = r * 2 + c / group;
                 return Bf16ToFp32(scales[g]) * static_cast<float>(q[r * cols + c] - zeros[g]);
               });
}

TEST(CompressedTensorsLinearTest, PackQuantizedW4A16GroupsAreExactQ4_0) {
  const int64_t rows = 3, cols = 128, group = 64;
  const std::vector<int> values = test::UniformRandom(rows * cols, -8, 7, 7);
  std::vector<int> codes(values.size());
  for (size_t i = 0; i < values.size(); ++i) codes[i] = values[i] + 8;
  const std::vector<uint16_t> scales = RandomBf16Scales(rows * 2, 8);
  LayerParts parts(kModule);
  parts.Add("weight_packed", "I32", {rows, cols / 8}, PackAlongInner(codes, rows, cols, 4));
  parts.Add("weight_scale", "BF16", {rows, 2}, scales);
  parts.Add("weight_shape", "I64", {2}, std::vector<int64_t>{rows, cols});
  ExpectWeight(
      ConvertCompressedTensorsLinear(Scheme(4, "group", group), "pack-quantized", parts.layer()),
      GgmlType::kQ4_0, rows, cols, [&](int64_t r, int64_t c) {
        return Bf16ToFp32(scales[r * 2 + c / group]) * values[r * cols + c];
      });
}

TEST(CompressedTensorsLinearTest, PackQuantizedW8A16PerChannel) {
  const int64_t rows = 2, cols = 64;
  const std::vector<int> values = test::UniformRandom(rows * cols, -128, 127, 9);
  std::vector<int> codes(values.size());
  for (size_t i = 0; i < values.size(); ++i) codes[i] = values[i] + 128;
  const std::vector<uint16_t> scales = RandomBf16Scales(rows, 10);
  LayerParts parts(kModule);
  parts.Add("weight_packed", "I32", {rows, cols / 4}, PackAlongInner(codes, rows, cols, 8));
  parts.Add("weight_scale", "BF16", {rows, 1}, scales);
  parts.Add("weight_shape", "I64", {2}, std::vector<int64_t>{rows, cols});
  ExpectWeight(
      ConvertCompressedTensorsLinear(Scheme(8, "channel"), "pack-quantized", parts.layer()),
      GgmlType::kQ8_0, rows, cols,
      [&](int64_t r, int64_t c) { return Bf16ToFp32(scales[r]) * values[r * cols + c]; });
}

TEST(CompressedTensorsLinearTest, PackQuantizedZeroPointsPackedAlongOut) {
  const int64_t rows = 12, cols = 64, group = 32, groups = 2;  // 12 rows: a partial zero word
  const std::vector<int> codes = test::UniformRandom(rows * cols, 0, 15, 11);
  const std::vector<int> zero_codes = test::UniformRandom(rows * groups, 0, 15, 12);
  // [rows, groups] → transposed [groups, rows] packed along rows (padded to 16) → [2, groups].
  std::vector<int> zero_codes_by_group(groups * 16, 0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g = 0; g < groups; ++g)
      zero_codes_by_group[g * 16 + r] = zero_codes[r * groups + g];
  }
  const std::vector<int32_t> packed_by_group = PackAlongInner(zero_codes_by_group, groups, 16, 4);
  std::vector<int32_t> packed_zeros(2 * groups);
  for (int64_t w = 0; w < 2; ++w) {
    for (int64_t g = 0; g < groups; ++g) packed_zeros[w * groups + g] = packed_by_group[g * 2 + w];
  }
  const std::vector<uint16_t> scales = RandomBf16Scales(rows * groups, 13);
  LayerParts parts(kModule);
  parts.Add("weight_packed", "I32", {rows, cols / 8}, PackAlongInner(codes, rows, cols, 4));
  parts.Add("weight_scale", "BF16", {rows, groups}, scales);
  parts.Add("weight_zero_point", "I32", {2, groups}, packed_zeros);
  parts.Add("weight_shape", "I64", {2}, std::vector<int64_t>{rows, cols});
  const auto want = [&](int64_t r, int64_t c) {
    const int64_t g = r * groups + c / group;
    return Bf16ToFp32(scales[g]) * static_cast<float>(codes[r * cols + c] - zero_codes[g]);
  };
  ExpectWeight(ConvertCompressedTensorsLinear(Scheme(4, "group", group, false), "pack-quantized",
                                              parts.layer()),
               GgmlType::kQ4_Z, rows, cols, want);
}

TEST(CompressedTensorsLinearTest, PackQuantizedActorderPermutesInputs) {
  const int64_t rows = 2, cols = 64, group = 32;
  const std::vector<int> values = test::UniformRandom(rows * cols, -8, 7, 14);
  std::vector<int> codes(values.size());
  for (size_t i = 0; i < values.size(); ++i) codes[i] = values[i] + 8;
  // Odd input columns in group 0, even ones in group 1.
  std::vector<int32_t> group_index(cols);
  for (int64_t c = 0; c < cols; ++c) group_index[c] = c % 2 == 0 ? 1 : 0;
  const std::vector<uint16_t> scales = RandomBf16Scales(rows * 2, 15);
  LayerParts parts(kModule);
  parts.Add("weight_packed", "I32", {rows, cols / 8}, PackAlongInner(codes, rows, cols, 4));
  parts.Add("weight_scale", "BF16", {rows, 2}, scales);
  parts.Add("weight_shape", "I64", {2}, std::vector<int64_t>{rows, cols});
  parts.Add("weight_g_idx", "I32", {cols}, group_index);
  auto linear =
      ConvertCompressedTensorsLinear(Scheme(4, "group", group), "pack-quantized", parts.layer());
  ASSERT_TRUE(linear.ok()) << linear.error();
  std::vector<int32_t> order(cols);
  for (int64_t j = 0; j < cols; ++j)
    order[j] = static_cast<int32_t>(j < 32 ? 2 * j + 1 : 2 * (j - 32));
  EXPECT_EQ(linear->input_order, order);
  ExpectWeight(linear, GgmlType::kQ4_0, rows, cols, [&](int64_t r, int64_t j) {
    const int64_t c = order[j];
    return Bf16ToFp32(scales[r * 2 + group_index[c]]) * values[r * cols + c];
  });

  parts.Add("weight_g_idx", "I32", {cols}, std::vector<int32_t>(cols, 2));
  ExpectErrorMentions(
      ConvertCompressedTensorsLinear(Scheme(4, "group", group), "pack-quantized", parts.layer()),
      {Part("weight_g_idx"), "out of range"});
  parts.Add("weight_g_idx", "I32", {cols}, std::vector<int32_t>(cols, 0));
  ExpectErrorMentions(
      ConvertCompressedTensorsLinear(Scheme(4, "group", group), "pack-quantized", parts.layer()),
      {Part("weight_g_idx"), "holds 64 input columns"});
}

TEST(CompressedTensorsLinearTest, FloatQuantizedFp8PerChannel) {
  const int64_t rows = 3, cols = 32;
  const std::vector<int> ints = test::UniformRandom(rows * cols, 0, 0x7e, 16);
  std::vector<uint8_t> codes(ints.begin(), ints.end());
  for (size_t i = 0; i < codes.size(); i += 3) codes[i] |= 0x80;
  const std::vector<uint16_t> scales = RandomBf16Scales(rows, 17);
  LayerParts parts(kModule);
  parts.Add("weight", "F8_E4M3", {rows, cols}, codes);
  parts.Add("weight_scale", "BF16", {rows, 1}, scales);
  CtScheme scheme{
      .targets = {"Linear"},
      .weights = {.num_bits = 8, .type = "float", .strategy = "channel"},
      .input_activations = CtQuantArgs{.type = "float", .strategy = "token", .dynamic = true}};
  // Per channel, whole blocks of 32: the codes stay 8-bit, e4m3 · scale in f32 as vLLM's, where
  // this CPU has F8_E4M3_B32's packed kernels; else BF16, that product (exact: a bf16 scale times
  // e4m3) rounded once.
  const bool eight_bit = kernels::HasPackedKernels(GgmlType::kF8_E4M3_B32);
  ExpectWeight(ConvertCompressedTensorsLinear(scheme, "float-quantized", parts.layer()),
               eight_bit ? GgmlType::kF8_E4M3_B32 : GgmlType::kBF16, rows, cols,
               [&](int64_t r, int64_t c) {
                 const float product = DecodeFp8E4m3(codes[r * cols + c]) * Bf16ToFp32(scales[r]);
                 return eight_bit ? product : Bf16ToFp32(Fp32ToBf16(product));
               });
}

TEST(CompressedTensorsLinearTest, NaiveQuantizedIntegersInAFloatDtype) {
  const int64_t rows = 2, cols = 32;
  const std::vector<int> q = test::UniformRandom(rows * cols, -128, 127, 18);
  std::vector<uint16_t> stored;
  for (int v : q) stored.push_back(Fp32ToBf16(static_cast<float>(v)));
  LayerParts parts(kModule);
  parts.Add("weight", "BF16", {rows, cols}, stored);
  parts.Add("weight_scale", "F32", {rows, 1}, std::vector<float>{0.5f, 0.25f});
  ExpectWeight(
      ConvertCompressedTensorsLinear(Scheme(8, "channel"), "naive-quantized", parts.layer()),
      GgmlType::kQ8_0, rows, cols,
      [&](int64_t r, int64_t c) { return (r == 0 ? 0.5f : 0.25f) * q[r * cols + c]; });

  stored[5] = Fp32ToBf16(0.5f);
  parts.Add("weight", "BF16", {rows, cols}, stored);
  ExpectErrorMentions(
      ConvertCompressedTensorsLinear(Scheme(8, "channel"), "naive-quantized", parts.layer()),
      {Part("weight"), "not a quantized integer"});
  stored[5] = Fp32ToBf16(200.0f);
  parts.Add("weight", "BF16", {rows, cols}, stored);
  ExpectErrorMentions(
      ConvertCompressedTensorsLinear(Scheme(8, "channel"), "naive-quantized", parts.layer()),
      {Part("weight"), "200", "8-bit range"});
}

TEST(CompressedTensorsLinearTest, MalformedPartsAreErrorsNamingTheTensor) {
  const int64_t rows = 2, cols = 64;
  const std::vector<int32_t> words(rows * cols / 8, 0x88888888);
  const auto packed_layer = [&](std::vector<int64_t> packed_shape, int64_t packed_bytes,
                                std::vector<int64_t> scale_shape, std::vector<int64_t> shape) {
    auto parts = std::make_unique<LayerParts>(kModule);
    parts->Add("weight_packed", "I32", packed_shape, words, packed_bytes);
    int64_t count = 1;
    for (int64_t size : scale_shape) count *= size;
    parts->Add("weight_scale", "F32", scale_shape, std::vector<float>(count, 1.0f));
    parts->Add("weight_shape", "I64", {static_cast<int64_t>(shape.size())}, shape);
    return parts;
  };
  const CtScheme w4 = Scheme(4, "group", 32);
  ExpectErrorMentions(
      ConvertCompressedTensorsLinear(w4, "pack-quantized",
                                     packed_layer({rows, 7}, 56, {rows, 2}, {rows, cols})->layer()),
      {Part("weight_packed"), "[2, 7]", "[2, 8]"});
  ExpectErrorMentions(
      ConvertCompressedTensorsLinear(w4, "pack-quantized",
                                     packed_layer({rows, 8}, 60, {rows, 2}, {rows, cols})->layer()),
      {Part("weight_packed")});
  ExpectErrorMentions(
      ConvertCompressedTensorsLinear(w4, "pack-quantized",
                                     packed_layer({rows, 8}, 64, {rows, 3}, {rows, cols})->layer()),
      {Part("weight_scale"), "[2, 3]", "[2, 2]"});
  ExpectErrorMentions(
      ConvertCompressedTensorsLinear(w4, "pack-quantized",
                                     packed_layer({rows, 8}, 64, {rows, 2}, {rows})->layer()),
      {Part("weight_shape")});
  ExpectErrorMentions(
      ConvertCompressedTensorsLinear(
          w4, "pack-quantized",
          packed_layer({rows, 8}, 64, {rows, 2}, {rows, int64_t{1} << 62})->layer()),
      {Part("weight_shape"), "positive sizes"});
  ExpectErrorMentions(
      ConvertCompressedTensorsLinear(Scheme(4, "group", 48), "pack-quantized",
                                     packed_layer({rows, 8}, 64, {rows, 2}, {rows, cols})->layer()),
      {Part("weight_packed"), "group_size 48"});
  ExpectErrorMentions(
      ConvertCompressedTensorsLinear(Scheme(4, "group", 32, false), "pack-quantized",
                                     packed_layer({rows, 8}, 64, {rows, 2}, {rows, cols})->layer()),
      {Part("weight_zero_point"), "missing"});
  ExpectErrorMentions(
      ConvertCompressedTensorsLinear(w4, "marlin-24",
                                     packed_layer({rows, 8}, 64, {rows, 2}, {rows, cols})->layer()),
      {kModule, "marlin-24"});

  LayerParts int8(kModule);
  int8.Add("weight", "I8", {rows, cols}, std::vector<int8_t>(rows * cols, 1));
  int8.Add("weight_scale", "F32", {rows + 1, 1}, std::vector<float>(rows + 1, 1.0f));
  ExpectErrorMentions(
      ConvertCompressedTensorsLinear(Scheme(8, "channel"), "int-quantized", int8.layer()),
      {Part("weight_scale"), "[3, 1]"});
}

}  // namespace
}  // namespace vllm
