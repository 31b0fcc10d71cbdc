// bitsandbytes linears: NF4 / FP4 (with and without double quantization) become Q8_0 within half
// a Q8_0 step of quant_map[code] · absmax; LLM.int8 rows become Q8_0 of weight · SCB / 127;
// malformed parts (a quant_state that is not JSON or disagrees with the tensors) are errors
// naming the tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "common/half.h"
#include "model/hf_quant/quantized_linear.h"
#include "model/hf_quant/test_parts.h"

namespace vllm {
namespace {

using test::DequantizeWeight;
using test::ExpectErrorMentions;
using test::LayerParts;

const char* kModule = "model.layers.0.mlp.down_proj";

std::string Part(const std::string& suffix) { return std::string(kModule) + "." + suffix; }

// bitsandbytes' NF4 levels (QLoRA's normal-float table).
const std::vector<float> kNf4Map = {-1.0f,        -0.6961928f,  -0.52507305f,  -0.39491749f,
                                    -0.28444138f, -0.18477343f, -0.091050036f, 0.0f,
                                    0.0795803f,   0.1609302f,   0.2461123f,    0.33791524f,
                                    0.44070983f,  0.562617f,    0.72295684f,   1.0f};

std::vector<uint8_t> Bytes(const std::string& text) { return {text.begin(), text.end()}; }

// Two 4-bit codes per byte, the first in the high nibble: [ceil(n / 2), 1].
std::vector<uint8_t> PackNibbles(const std::vector<int>& codes) {
  std::vector<uint8_t> bytes((codes.size() + 1) / 2, 0);
  for (size_t i = 0; i < codes.size(); ++i) {
    bytes[i / 2] |= static_cast<uint8_t>(i % 2 == 0 ? codes[i] << 4 : codes[i]);
  }
  return bytes;
}

// The parts transformers saves for a 4-bit weight [rows, cols] with absmax per `blocksize`.
struct FourBitLayer {
  int64_t rows, cols, blocksize;
  std::vector<int> codes;     // [rows · cols]
  std::vector<float> absmax;  // dequantized, [ceil(rows · cols / blocksize)]
  std::vector<float> quant_map = kNf4Map;

  float Want(int64_t r, int64_t c) const {
    const int64_t i = r * cols + c;
    return quant_map[codes[i]] * absmax[i / blocksize];
  }
  void AddWeight(LayerParts* parts, const std::string& quant_state_json,
                 const std::string& quant_type = "nf4") const {
    const std::vector<uint8_t> packed = PackNibbles(codes);
    parts->Add("weight", "U8", {static_cast<int64_t>(packed.size()), 1}, packed);
    parts->Add("weight.quant_map", "F32", {16}, quant_map);
    const std::vector<uint8_t> state = Bytes(quant_state_json);
    parts->Add("weight.quant_state.bitsandbytes__" + quant_type, "U8",
               {static_cast<int64_t>(state.size())}, state);
  }
};

std::string StateJson(const std::string& quant_type, int64_t blocksize, int64_t rows, int64_t cols,
                      const std::string& nested = "") {
  return "{\"quant_type\": \"" + quant_type + "\", \"blocksize\": " + std::to_string(blocksize) +
         ", \"dtype\": \"bfloat16\", \"shape\": [" + std::to_string(rows) + ", " +
         std::to_string(cols) + "]" + nested + "}";
}

// Expects Q8_0 within half a step of `want`: each block of 32 has d = max|want| / 127, and the
// kernel's d is that rounded to f16 (up to 127 steps of its 2^-11 relative error).
template <typename Want>
void ExpectQ8_0Near(const Expected<ConvertedLinear>& linear, int64_t rows, int64_t cols,
                    Want want) {
  ASSERT_TRUE(linear.ok()) << linear.error();
  EXPECT_EQ(linear->weight.name, Part("weight"));
  ASSERT_EQ(linear->weight.type, GgmlType::kQ8_0);
  ASSERT_EQ(linear->weight.shape, (std::vector<int64_t>{cols, rows}));
  const std::vector<float> values = DequantizeWeight(linear->weight);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t block = 0; block < cols / 32; ++block) {
      float max_magnitude = 0.0f;
      for (int64_t c = block * 32; c < block * 32 + 32; ++c) {
        max_magnitude = std::max(max_magnitude, std::fabs(want(r, c)));
      }
      const float step = max_magnitude / 127.0f;
      const float tolerance = step * (0.5f + 127.0f / 2048.0f) + 1e-7f;
      for (int64_t c = block * 32; c < block * 32 + 32; ++c) {
        ASSERT_NEAR(values[r * cols + c], want(r, c), tolerance) << r << "," << c;
      }
    }
  }
}

TEST(BitsAndBytesLinearTest, Nf4BlocksSpanRows) {
  // 2 × 96 values in blocks of 64: block 1 holds the end of row 0 and the start of row 1.
  FourBitLayer layer{.rows = 2, .cols = 96, .blocksize = 64};
  layer.codes = test::UniformRandom(2 * 96, 0, 15, 1);
  layer.absmax = test::UniformRandom(3, 0.01f, 0.2f, 2);
  LayerParts parts(kModule);
  layer.AddWeight(&parts, StateJson("nf4", 64, 2, 96));
  parts.Add("weight.absmax", "F32", {3}, layer.absmax);
  ExpectQ8_0Near(ConvertBitsAndBytesLinear({.load_in_4bit = true}, parts.layer()), 2, 96,
                 [&](int64_t r, int64_t c) { return layer.Want(r, c); });
}

TEST(BitsAndBytesLinearTest, Fp4WithDoubleQuantization) {
  const int64_t rows = 3, cols = 64, blocksize = 32, nested_blocksize = 4;  // 6 absmax, 2 nested
  FourBitLayer layer{.rows = rows, .cols = cols, .blocksize = blocksize};
  layer.codes = test::UniformRandom(rows * cols, 0, 15, 3);
  layer.quant_map = {0.0f, 0.0052f,  0.6667f,  1.0f,  0.3333f,  0.5f,  0.1667f,  0.25f,
                     0.0f, -0.0052f, -0.6667f, -1.0f, -0.3333f, -0.5f, -0.1667f, -0.25f};
  const std::vector<int> absmax_codes = test::UniformRandom(6, 0, 255, 4);
  std::vector<float> nested_map(256);
  for (int k = 0; k < 256; ++k) nested_map[k] = (static_cast<float>(k) - 127.5f) / 127.5f;
  const std::vector<float> nested_absmax = {0.05f, 0.02f};
  const float offset = 0.1f;
  for (int64_t j = 0; j < 6; ++j) {
    layer.absmax.push_back(nested_map[absmax_codes[j]] * nested_absmax[j / nested_blocksize] +
                           offset);
  }
  LayerParts parts(kModule);
  layer.AddWeight(&parts,
                  StateJson("fp4", blocksize, rows, cols,
                            ", \"nested_blocksize\": 4, \"nested_dtype\": \"float32\", "
                            "\"nested_offset\": 0.1"),
                  "fp4");
  parts.Add("weight.absmax", "U8", {6},
            std::vector<uint8_t>(absmax_codes.begin(), absmax_codes.end()));
  parts.Add("weight.nested_absmax", "F32", {2}, nested_absmax);
  parts.Add("weight.nested_quant_map", "F32", {256}, nested_map);
  const BitsAndBytesConfig config{.load_in_4bit = true, .quant_type = "fp4", .double_quant = true};
  ExpectQ8_0Near(ConvertBitsAndBytesLinear(config, parts.layer()), rows, cols,
                 [&](int64_t r, int64_t c) { return layer.Want(r, c); });
}

TEST(BitsAndBytesLinearTest, RowsOfPartialBlocksLoadAsF16) {
  FourBitLayer layer{.rows = 3, .cols = 5, .blocksize = 4};  // 15 values: a half-filled byte
  layer.codes = test::UniformRandom(15, 0, 15, 5);
  layer.absmax = test::UniformRandom(4, 0.5f, 2.0f, 6);
  LayerParts parts(kModule);
  layer.AddWeight(&parts, StateJson("nf4", 4, 3, 5));
  parts.Add("weight.absmax", "F32", {4}, layer.absmax);
  auto linear = ConvertBitsAndBytesLinear({.load_in_4bit = true}, parts.layer());
  ASSERT_TRUE(linear.ok()) << linear.error();
  ASSERT_EQ(linear->weight.type, GgmlType::kF16);
  const std::vector<float> values = DequantizeWeight(linear->weight);
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t c = 0; c < 5; ++c) {
      EXPECT_EQ(values[r * 5 + c], Fp16ToFp32(Fp32ToFp16(layer.Want(r, c)))) << r << "," << c;
    }
  }
}

TEST(BitsAndBytesLinearTest, Int8RowsTimesScbOver127) {
  const int64_t rows = 2, cols = 64;
  const std::vector<int> ints = test::UniformRandom(rows * cols, 0, 255, 7);
  std::vector<int8_t> q;
  for (int v : ints) q.push_back(static_cast<int8_t>(v - 128));
  const std::vector<float> scb = {3.5f, 0.75f};
  LayerParts parts(kModule);
  parts.Add("weight", "I8", {rows, cols}, q);
  parts.Add("SCB", "F32", {rows}, scb);
  parts.Add("weight_format", "U8", {}, std::vector<uint8_t>{0});
  auto linear = ConvertBitsAndBytesLinear({.load_in_8bit = true}, parts.layer());
  ASSERT_TRUE(linear.ok()) << linear.error();
  ASSERT_EQ(linear->weight.type, GgmlType::kQ8_0);
  const std::vector<float> values = DequantizeWeight(linear->weight);
  for (int64_t r = 0; r < rows; ++r) {
    // The row's step SCB / 127 as the Q8_0 block's f16 scale.
    const float step = Fp16ToFp32(Fp32ToFp16(scb[r] / 127.0f));
    for (int64_t c = 0; c < cols; ++c) {
      ASSERT_EQ(values[r * cols + c], step * q[r * cols + c]) << r << "," << c;
      ASSERT_NEAR(values[r * cols + c], q[r * cols + c] * scb[r] / 127.0f, 127 * step / 2048);
    }
  }

  parts.Add("weight_format", "U8", {}, std::vector<uint8_t>{2});
  ExpectErrorMentions(ConvertBitsAndBytesLinear({.load_in_8bit = true}, parts.layer()),
                      {Part("weight_format"), "row-major"});
  parts.Add("weight_format", "U8", {}, std::vector<uint8_t>{0});
  parts.Add("SCB", "F32", {rows + 1}, std::vector<float>(rows + 1, 1.0f));
  ExpectErrorMentions(ConvertBitsAndBytesLinear({.load_in_8bit = true}, parts.layer()),
                      {Part("SCB"), "[3]"});
  parts.Add("weight", "U8", {rows, cols}, std::vector<uint8_t>(rows * cols, 1));
  ExpectErrorMentions(ConvertBitsAndBytesLinear({.load_in_8bit = true}, parts.layer()),
                      {Part("weight"), "U8"});
}

TEST(BitsAndBytesLinearTest, MalformedFourBitPartsAreErrorsNamingTheTensor) {
  FourBitLayer layer{.rows = 2, .cols = 64, .blocksize = 64};
  layer.codes = test::UniformRandom(128, 0, 15, 8);
  layer.absmax = {1.0f, 1.0f};
  const BitsAndBytesConfig config{.load_in_4bit = true};
  const std::string state = Part("weight.quant_state.bitsandbytes__nf4");
  const auto convert_with = [&](const std::string& json, const std::vector<int64_t>& absmax_shape) {
    LayerParts parts(kModule);
    layer.AddWeight(&parts, json);
    parts.Add("weight.absmax", "F32", absmax_shape, std::vector<float>(absmax_shape[0], 1.0f));
    return ConvertBitsAndBytesLinear(config, parts.layer());
  };
  ASSERT_TRUE(convert_with(StateJson("nf4", 64, 2, 64), {2}).ok());
  ExpectErrorMentions(convert_with("not json", {2}), {state, "JSON"});
  ExpectErrorMentions(convert_with("[[[[[[[[[[[[1]]]]]]]]]]]]", {2}), {state, "deep"});
  ExpectErrorMentions(convert_with(StateJson("fp4", 64, 2, 64), {2}), {state, "fp4"});
  ExpectErrorMentions(convert_with(StateJson("nf4", 0, 2, 64), {2}), {state, "blocksize"});
  ExpectErrorMentions(convert_with(StateJson("nf4", 64, 4, 64), {4}),
                      {Part("weight"), "[64, 1]", "128 U8"});
  ExpectErrorMentions(convert_with(StateJson("nf4", 32, 2, 64), {2}),
                      {Part("weight.absmax"), "4 values"});
  ExpectErrorMentions(convert_with("{\"quant_type\": \"nf4\", \"blocksize\": 64}", {2}),
                      {state, "shape"});
  ExpectErrorMentions(
      convert_with(StateJson("nf4", 64, 2, 64, ", \"nested_blocksize\": 256, \"nested_offset\": 0"),
                   {2}),
      {Part("weight.absmax"), "U8"});

  LayerParts no_map(kModule);
  no_map.Add("weight", "U8", {64, 1}, PackNibbles(layer.codes));
  const std::vector<uint8_t> json = Bytes(StateJson("nf4", 64, 2, 64));
  no_map.Add("weight.quant_state.bitsandbytes__nf4", "U8", {static_cast<int64_t>(json.size())},
             json);
  no_map.Add("weight.absmax", "F32", {2}, layer.absmax);
  ExpectErrorMentions(ConvertBitsAndBytesLinear(config, no_map.layer()),
                      {Part("weight.quant_map"), "missing"});
  ExpectErrorMentions(ConvertBitsAndBytesLinear({}, no_map.layer()), {kModule, "load_in_4bit"});
}

}  // namespace
}  // namespace vllm
