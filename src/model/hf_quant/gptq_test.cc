// GPTQ layers packed here as AutoGPTQ packs them (its 3-bit layout included) convert to weights
// whose dequantized rows, un-permuted by input_order, are s · (q − zero) of every input column.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "common/half.h"
#include "model/hf_quant/quantized_linear.h"
#include "model/hf_quant/test_parts.h"

namespace vllm {
namespace {

// AutoGPTQ's packing of codes (a multiple of 32 of them) into codes · bits / 32 words: 32 / bits
// per word for 2, 4 and 8 bits; for 3 bits, 32 codes in 3 words with codes 10 and 21 split
// across words.
std::vector<uint32_t> PackCodes(const std::vector<uint32_t>& codes, int bits) {
  std::vector<uint32_t> words(codes.size() * bits / 32, 0);
  if (bits != 3) {
    const size_t per_word = 32 / bits;
    for (size_t k = 0; k < codes.size(); ++k) {
      words[k / per_word] |= codes[k] << (bits * (k % per_word));
    }
    return words;
  }
  for (size_t block = 0; block < codes.size() / 32; ++block) {
    const uint32_t* c = codes.data() + 32 * block;
    uint32_t* w = words.data() + 3 * block;
    for (int j = 0; j < 10; ++j) w[0] |= c[j] << (3 * j);
    w[0] |= c[10] << 30;
    w[1] |= (c[10] >> 2) & 1;
    for (int j = 0; j < 10; ++j) w[1] |= c[11 + j] << (3 * j + 1);
    w[1] |= c[21] << 31;
    w[2] |= (c[21] >> 1) & 3;
    for (int j = 0; j < 10; ++j) w[2] |= c[22 + j] << (3 * j + 2);
  }
  return words;
}

struct GptqCase {
  int bits;
  int64_t group_size;  // -1: one group
  bool sym;
  bool desc_act;
  bool zeros_minus_one;
  GgmlType type;  // what the rule picks
};

// A random GPTQ layer [out, in] and the weights it stands for.
struct GptqLayer {
  test::LayerParts parts{"model.layers.0.mlp.up_proj"};
  std::vector<float> expected;  // [out, in]
};

void BuildGptqLayer(const GptqCase& c, int64_t out, int64_t in, uint32_t seed, GptqLayer* layer) {
  std::mt19937 rng(seed);
  const int64_t group_size = c.group_size == -1 ? in : c.group_size;
  const int64_t num_groups = in / group_size;
  const uint32_t max_code = (1u << c.bits) - 1;
  std::vector<int32_t> perm(in);
  std::iota(perm.begin(), perm.end(), 0);
  if (c.desc_act) std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<int32_t> g_idx(in);
  for (int64_t k = 0; k < in; ++k) g_idx[perm[k]] = static_cast<int32_t>(k / group_size);

  std::uniform_int_distribution<uint32_t> code(0, max_code);
  std::uniform_int_distribution<uint32_t> zero(c.zeros_minus_one ? 1 : 0, max_code);
  std::uniform_real_distribution<float> scale(0.001f, 0.05f);
  std::vector<uint32_t> codes(out * in);  // [out, in]
  for (uint32_t& q : codes) q = code(rng);
  std::vector<uint32_t> zeros(num_groups * out);  // [groups, out]
  for (uint32_t& z : zeros) z = c.sym ? (max_code + 1) / 2 : zero(rng);
  std::vector<uint16_t> scales(num_groups * out);  // f16 [groups, out]
  for (uint16_t& s : scales) s = Fp32ToFp16(scale(rng));

  std::vector<uint32_t> qweight(in * c.bits / 32 * out);  // [in · bits / 32, out]
  for (int64_t o = 0; o < out; ++o) {
    std::vector<uint32_t> column(in);
    for (int64_t i = 0; i < in; ++i) column[i] = codes[o * in + i];
    const std::vector<uint32_t> words = PackCodes(column, c.bits);
    for (size_t w = 0; w < words.size(); ++w) qweight[w * out + o] = words[w];
  }
  std::vector<uint32_t> qzeros;  // [groups, out · bits / 32]
  for (int64_t g = 0; g < num_groups; ++g) {
    std::vector<uint32_t> row(out);
    for (int64_t o = 0; o < out; ++o) {
      row[o] = (zeros[g * out + o] - (c.zeros_minus_one ? 1 : 0)) & max_code;
    }
    const std::vector<uint32_t> words = PackCodes(row, c.bits);
    qzeros.insert(qzeros.end(), words.begin(), words.end());
  }
  layer->parts.Add("qweight", "I32", {in * c.bits / 32, out}, qweight);
  layer->parts.Add("qzeros", "I32", {num_groups, out * c.bits / 32}, qzeros);
  layer->parts.Add("scales", "F16", {num_groups, out}, scales);
  layer->parts.Add("g_idx", "I32", {in}, g_idx);
  layer->expected.resize(out * in);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t i = 0; i < in; ++i) {
      const int64_t g = g_idx[i];
      layer->expected[o * in + i] = Fp16ToFp32(scales[g * out + o]) *
                                    static_cast<float>(static_cast<int>(codes[o * in + i]) -
                                                       static_cast<int>(zeros[g * out + o]));
    }
  }
}

GptqConfig ConfigOf(const GptqCase& c) {
  return {.bits = c.bits,
          .group_size = c.group_size,
          .sym = c.sym,
          .desc_act = c.desc_act,
          .zeros_minus_one = c.zeros_minus_one};
}

class GptqConversionTest : public ::testing::TestWithParam<GptqCase> {};

// Converts a random layer of case `c` and compares every value with the formula.
void ExpectConvertsToTheFormula(const GptqCase& c, int64_t out, int64_t in) {
  GptqLayer layer;
  BuildGptqLayer(c, out, in, 17, &layer);
  auto converted = ConvertGptqLinear(ConfigOf(c), layer.parts.layer());
  ASSERT_TRUE(converted.ok()) << converted.error();
  EXPECT_EQ(converted->weight.name, "model.layers.0.mlp.up_proj.weight");
  ASSERT_EQ(converted->weight.type, c.type)
      << GgmlTypeName(static_cast<uint32_t>(converted->weight.type));
  EXPECT_EQ(converted->weight.shape, (std::vector<int64_t>{in, out}));
  const std::vector<int32_t>& order = converted->input_order;
  if (c.desc_act && c.group_size != -1) {  // one group: every column's group is in order
    ASSERT_EQ(order.size(), static_cast<size_t>(in));
    std::vector<int32_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < in; ++i) ASSERT_EQ(sorted[i], i);
  } else {
    EXPECT_TRUE(order.empty());
  }
  const std::vector<float> values = test::DequantizeWeight(converted->weight);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t j = 0; j < in; ++j) {
      const float want = layer.expected[o * in + (order.empty() ? j : order[j])];
      const float got = values[o * in + j];
      if (c.type == GgmlType::kQ4_0 || c.type == GgmlType::kQ4_Z || c.type == GgmlType::kQ8_0) {
        ASSERT_EQ(got, want) << o << "," << j;
      } else {  // F16's values: within f16 rounding of the largest term
        ASSERT_NEAR(got, want, 0.05f * (1 << c.bits) * 1e-3f) << o << "," << j;
      }
    }
  }
}

TEST_P(GptqConversionTest, DequantizedRowsEqualTheFormula) {
  ExpectConvertsToTheFormula(GetParam(), 64, 256);
}

// 2- and 8-bit layers whose inputs are not a multiple of 32 (a whole row as one group): F16.
TEST(GptqConversionTest, InputsNotAMultipleOf32) {
  ExpectConvertsToTheFormula({2, -1, true, false, true, GgmlType::kF16}, 32, 48);
  ExpectConvertsToTheFormula({8, -1, false, false, false, GgmlType::kF16}, 32, 52);
}

INSTANTIATE_TEST_SUITE_P(Layouts, GptqConversionTest,
                         ::testing::Values(GptqCase{4, 128, true, false, true, GgmlType::kQ4_0},
                                           GptqCase{4, 32, false, true, true, GgmlType::kQ4_Z},
                                           GptqCase{4, 64, false, false, false, GgmlType::kQ4_Z},
                                           GptqCase{4, -1, true, true, false, GgmlType::kQ4_0},
                                           GptqCase{2, 32, true, true, true, GgmlType::kQ4_0},
                                           GptqCase{2, -1, false, false, false, GgmlType::kQ4_0},
                                           GptqCase{3, 64, true, false, true, GgmlType::kQ4_0},
                                           GptqCase{3, 128, false, true, false, GgmlType::kQ4_0},
                                           GptqCase{8, 128, true, false, true, GgmlType::kQ8_0},
                                           GptqCase{8, 32, true, true, false, GgmlType::kQ8_0},
                                           GptqCase{8, 64, false, true, false, GgmlType::kF16}),
                         [](const ::testing::TestParamInfo<GptqCase>& param_info) {
                           const GptqCase& c = param_info.param;
                           return "Bits" + std::to_string(c.bits) + "Group" +
                                  (c.group_size < 0 ? std::string("All")
                                                    : std::to_string(c.group_size)) +
                                  (c.sym ? "Sym" : "Asym") + (c.desc_act ? "DescAct" : "") +
                                  (c.zeros_minus_one ? "V1" : "V2");
                         });

// The 3-bit layout's split codes: code 10 spans bits 30..32 and code 21 bits 63..65.
TEST(GptqConversionTest, ThreeBitCodesSpanWords) {
  std::vector<uint32_t> codes(32, 0);
  codes[10] = 7;
  codes[21] = 5;
  EXPECT_EQ(PackCodes(codes, 3), (std::vector<uint32_t>{0xc0000000u, 0x80000001u, 0x2u}));
}

TEST(GptqConversionTest, MalformedTensorsAreErrorsNamingThem) {
  const GptqCase c{4, 64, false, true, true, GgmlType::kQ4_Z};
  const GptqConfig config = ConfigOf(c);
  const std::string module = "model.layers.0.mlp.up_proj";
  const auto build = [&](GptqLayer* layer) { BuildGptqLayer(c, 64, 256, 5, layer); };
  const auto replaced = [&](const std::string& suffix, std::vector<int64_t> shape,
                            const std::vector<int32_t>& values, GptqLayer* layer) {
    build(layer);
    layer->parts.Add(suffix, suffix == "scales" ? "F16" : "I32", std::move(shape), values);
  };
  {  // qweight rows that are not in · bits / 32 for in a multiple of the group size
    GptqLayer layer;
    replaced("qweight", {36, 64}, std::vector<int32_t>(36 * 64), &layer);
    test::ExpectErrorMentions(ConvertGptqLinear(config, layer.parts.layer()),
                              {module + ".qweight", "288 input features", "group_size = 64"});
  }
  {  // 3-bit rows that are not whole runs of 3 words
    GptqLayer layer;
    replaced("qweight", {4, 64}, std::vector<int32_t>(4 * 64), &layer);
    GptqConfig three_bit = config;
    three_bit.bits = 3;
    test::ExpectErrorMentions(ConvertGptqLinear(three_bit, layer.parts.layer()),
                              {module + ".qweight", "[4, 64]", "[in · 3 / 32, out]"});
  }
  {  // truncated qweight
    GptqLayer layer;
    build(&layer);
    layer.parts.Add("qweight", "I32", {32, 64}, std::vector<int32_t>(32 * 64), 1000);
    test::ExpectErrorMentions(ConvertGptqLinear(config, layer.parts.layer()),
                              {module + ".qweight", "1000 bytes"});
  }
  {  // scales of the wrong shape
    GptqLayer layer;
    build(&layer);
    layer.parts.Add("scales", "F16", {64, 4}, std::vector<uint16_t>(256));
    test::ExpectErrorMentions(ConvertGptqLinear(config, layer.parts.layer()),
                              {module + ".scales", "[64, 4]", "expected [4, 64]"});
  }
  {  // qzeros of the wrong shape
    GptqLayer layer;
    replaced("qzeros", {4, 16}, std::vector<int32_t>(64), &layer);
    test::ExpectErrorMentions(ConvertGptqLinear(config, layer.parts.layer()),
                              {module + ".qzeros", "[4, 16]", "expected [4, 8]"});
  }
  {  // g_idx out of range
    GptqLayer layer;
    std::vector<int32_t> g_idx(256);
    for (int i = 0; i < 256; ++i) g_idx[i] = i / 64;
    g_idx[7] = 4;
    replaced("g_idx", {256}, g_idx, &layer);
    test::ExpectErrorMentions(ConvertGptqLinear(config, layer.parts.layer()),
                              {module + ".g_idx", "out of range"});
  }
  {  // g_idx whose groups do not hold group_size columns each
    GptqLayer layer;
    std::vector<int32_t> g_idx(256);
    for (int i = 0; i < 256; ++i) g_idx[i] = i / 64;
    g_idx[0] = 1;
    replaced("g_idx", {256}, g_idx, &layer);
    test::ExpectErrorMentions(ConvertGptqLinear(config, layer.parts.layer()),
                              {module + ".g_idx", "group 0 holds 63 input columns"});
  }
  {  // missing qzeros
    test::LayerParts parts(module);
    parts.Add("qweight", "I32", {32, 64}, std::vector<int32_t>(32 * 64));
    parts.Add("scales", "F16", {4, 64}, std::vector<uint16_t>(256));
    test::ExpectErrorMentions(ConvertGptqLinear(config, parts.layer()),
                              {module + ".qzeros", "missing"});
  }
  {  // a bit width GPTQ does not define
    GptqLayer layer;
    build(&layer);
    GptqConfig five_bit = config;
    five_bit.bits = 5;
    test::ExpectErrorMentions(ConvertGptqLinear(five_bit, layer.parts.layer()),
                              {"quantization_config.bits = 5", "gptq"});
  }
}

}  // namespace
}  // namespace vllm
