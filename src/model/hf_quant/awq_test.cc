// AutoAWQ layers packed here as AutoAWQ packs them (GEMM: along out in the order 0 2 4 6 1 3 5 7;
// GEMV: along in, zeros and scales padded to its zeros width) convert to weights whose
// dequantized rows are (q − z) · s.
#include <gtest/gtest.h>

#include <random>

#include "common/half.h"
#include "model/hf_quant/quantized_linear.h"
#include "model/hf_quant/test_parts.h"

namespace vllm {
namespace {

constexpr int kGemmOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};

// Eight 4-bit codes per word: nibble j holds codes[order[j]].
std::vector<uint32_t> PackNibbles(const std::vector<uint32_t>& codes, bool interleaved) {
  std::vector<uint32_t> words(codes.size() / 8, 0);
  for (size_t w = 0; w < words.size(); ++w) {
    for (int j = 0; j < 8; ++j) {
      words[w] |= codes[8 * w + (interleaved ? kGemmOrder[j] : j)] << (4 * j);
    }
  }
  return words;
}

struct AwqLayer {
  test::LayerParts parts{"model.layers.1.self_attn.o_proj"};
  std::vector<float> expected;  // [out, in]
};

// A random AWQ layer [out, in] in the GEMM or GEMV layout; `zeros_width`: GEMV's padded width.
void BuildAwqLayer(bool gemv, int64_t out, int64_t in, int64_t group_size, int64_t zeros_width,
                   uint32_t seed, AwqLayer* layer) {
  std::mt19937 rng(seed);
  const int64_t num_groups = in / group_size;
  std::uniform_int_distribution<uint32_t> code(0, 15);
  std::uniform_real_distribution<float> scale(0.001f, 0.05f);
  std::vector<uint32_t> codes(out * in), zeros(out * num_groups);  // [out, in], [out, groups]
  for (uint32_t& q : codes) q = code(rng);
  for (uint32_t& z : zeros) z = code(rng);
  std::vector<float> scales(out * num_groups);  // f16 values, [out, groups]
  for (float& s : scales) s = Fp16ToFp32(Fp32ToFp16(scale(rng)));
  layer->expected.resize(out * in);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t i = 0; i < in; ++i) {
      const int64_t g = o * num_groups + i / group_size;
      layer->expected[o * in + i] =
          static_cast<float>(static_cast<int>(codes[o * in + i]) - static_cast<int>(zeros[g])) *
          scales[g];
    }
  }
  if (gemv) {
    std::vector<uint32_t> padded_zeros(out * zeros_width * 8, 0);
    std::vector<uint16_t> padded_scales(out * zeros_width * 8, 0);
    for (int64_t o = 0; o < out; ++o) {
      for (int64_t g = 0; g < num_groups; ++g) {
        padded_zeros[o * zeros_width * 8 + g] = zeros[o * num_groups + g];
        padded_scales[o * zeros_width * 8 + g] = Fp32ToFp16(scales[o * num_groups + g]);
      }
    }
    layer->parts.Add("qweight", "I32", {out, in / 8}, PackNibbles(codes, false));
    layer->parts.Add("qzeros", "I32", {out, zeros_width}, PackNibbles(padded_zeros, false));
    layer->parts.Add("scales", "F16", {out, zeros_width * 8}, padded_scales);
    return;
  }
  std::vector<uint32_t> codes_by_in(in * out), zeros_by_group(num_groups * out);
  std::vector<uint16_t> scales_by_group(num_groups * out);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t i = 0; i < in; ++i) codes_by_in[i * out + o] = codes[o * in + i];
    for (int64_t g = 0; g < num_groups; ++g) {
      zeros_by_group[g * out + o] = zeros[o * num_groups + g];
      scales_by_group[g * out + o] = Fp32ToFp16(scales[o * num_groups + g]);
    }
  }
  layer->parts.Add("qweight", "I32", {in, out / 8}, PackNibbles(codes_by_in, true));
  layer->parts.Add("qzeros", "I32", {num_groups, out / 8}, PackNibbles(zeros_by_group, true));
  layer->parts.Add("scales", "F16", {num_groups, out}, scales_by_group);
}

void ExpectConversion(const AwqConfig& config, const AwqLayer& layer, int64_t out, int64_t in) {
  auto converted = ConvertAwqLinear(config, layer.parts.layer());
  ASSERT_TRUE(converted.ok()) << converted.error();
  EXPECT_EQ(converted->weight.name, "model.layers.1.self_attn.o_proj.weight");
  EXPECT_EQ(converted->weight.type, GgmlType::kQ4_Z);
  EXPECT_EQ(converted->weight.shape, (std::vector<int64_t>{in, out}));
  EXPECT_TRUE(converted->input_order.empty());
  const std::vector<float> values = test::DequantizeWeight(converted->weight);
  for (int64_t k = 0; k < out * in; ++k) {
    ASSERT_EQ(values[k], layer.expected[k]) << k / in << "," << k % in;  // Q4_Z: exact
  }
}

TEST(AwqConversionTest, GemmLayoutEqualsTheFormula) {
  for (int64_t group_size : {64, 128}) {
    AwqLayer layer;
    BuildAwqLayer(false, 48, 256, group_size, 0, 3, &layer);
    ExpectConversion({.bits = 4, .group_size = group_size}, layer, 48, 256);
  }
}

TEST(AwqConversionTest, GemvLayoutEqualsTheFormula) {
  // AutoAWQ's zeros width: ceil(groups / 8) words rounded up to 2 words (group 64) or 1 (128).
  for (auto [group_size, zeros_width] : {std::pair<int64_t, int64_t>{64, 2}, {128, 1}}) {
    AwqLayer layer;
    BuildAwqLayer(true, 24, 512, group_size, zeros_width, 4, &layer);
    ExpectConversion({.bits = 4, .group_size = group_size, .version = "gemv"}, layer, 24, 512);
  }
}

TEST(AwqConversionTest, MalformedTensorsAreErrorsNamingThem) {
  const std::string module = "model.layers.1.self_attn.o_proj";
  const AwqConfig config{.bits = 4, .group_size = 64};
  // A GEMM layer [16, 128] with part `suffix` replaced by zeros of the 2-D `shape`, converted.
  const auto convert_replaced = [&](const std::string& suffix, std::vector<int64_t> shape) {
    AwqLayer layer;
    BuildAwqLayer(false, 16, 128, 64, 0, 5, &layer);
    const size_t count = shape[0] * shape[1];
    if (suffix == "scales") {
      layer.parts.Add(suffix, "F16", std::move(shape), std::vector<uint16_t>(count));
    } else {
      layer.parts.Add(suffix, "I32", std::move(shape), std::vector<int32_t>(count));
    }
    return ConvertAwqLinear(config, layer.parts.layer());
  };
  test::ExpectErrorMentions(convert_replaced("scales", {16, 2}),
                            {module + ".scales", "[16, 2]", "expected [2, 16]"});
  test::ExpectErrorMentions(convert_replaced("qzeros", {1, 2}),
                            {module + ".qzeros", "[1, 2]", "expected [2, 2]"});
  test::ExpectErrorMentions(convert_replaced("qweight", {96, 2}),
                            {module + ".qweight", "96 input features", "group_size = 64"});
  {
    AwqLayer layer;
    BuildAwqLayer(false, 16, 128, 64, 0, 5, &layer);
    test::ExpectErrorMentions(
        ConvertAwqLinear({.bits = 4, .version = "marlin"}, layer.parts.layer()),
        {"quantization_config.version = 'marlin'", "awq"});
  }
  {
    test::LayerParts parts(module);
    parts.Add("qweight", "I32", {128, 2}, std::vector<int32_t>(256));
    parts.Add("qzeros", "I32", {2, 2}, std::vector<int32_t>(4));
    test::ExpectErrorMentions(ConvertAwqLinear(config, parts.layer()),
                              {module + ".scales", "missing"});
  }
}

}  // namespace
}  // namespace vllm
