// The quantized checkpoint writers: each format's tensors have its tool's names, shapes and
// dtypes, and unpacked the way its loaders read them (written out here from each format's
// description, not with the writer's packing code) they give back exactly the dequantized values.
#include "model/hf_quant_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "common/fp8.h"
#include "common/half.h"
#include "formats/safetensors_file.h"
#include "model/hf_export.h"
#include "model/random_model.h"

namespace vllm {
namespace {

namespace fs = std::filesystem;

// A [rows, cols] weight of normal values with standard deviation 1 / sqrt(cols).
std::vector<float> RandomWeight(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f / std::sqrt(static_cast<float>(cols)));
  std::vector<float> weight(rows * cols);
  for (float& value : weight) value = normal(generator);
  return weight;
}

QuantizedHfLinear Quantize(const std::string& format, const std::vector<float>& weight,
                           int64_t rows, int64_t cols, int bits = 0, int64_t group_size = 0,
                           bool asym = false) {
  auto options = MakeHfQuantWriterOptions(format, bits, group_size, asym, 7);
  EXPECT_TRUE(options.ok()) << options.error();
  auto layer = QuantizeHfLinear(*options, "model.layers.0.mlp.up_proj", weight.data(), rows, cols);
  EXPECT_TRUE(layer.ok()) << layer.error();
  EXPECT_EQ(layer->dequantized.size(), weight.size());
  return std::move(*layer);
}

// The layer's tensors by suffix after "model.layers.0.mlp.up_proj.".
std::map<std::string, const WrittenTensor*> BySuffix(const QuantizedHfLinear& layer) {
  std::map<std::string, const WrittenTensor*> parts;
  for (const WrittenTensor& tensor : layer.tensors) {
    const std::string prefix = "model.layers.0.mlp.up_proj.";
    EXPECT_EQ(tensor.name.substr(0, prefix.size()), prefix);
    parts[tensor.name.substr(prefix.size())] = &tensor;
  }
  return parts;
}

void ExpectTensor(const WrittenTensor* tensor, const std::string& dtype,
                  const std::vector<int64_t>& shape, int64_t element_bytes) {
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(tensor->dtype, dtype);
  EXPECT_EQ(tensor->shape, shape);
  int64_t count = 1;
  for (int64_t size : shape) count *= size;
  EXPECT_EQ(static_cast<int64_t>(tensor->bytes.size()), count * element_bytes);
}

template <typename T>
T ValueAt(const WrittenTensor& tensor, int64_t index) {
  T value;
  std::memcpy(&value, tensor.bytes.data() + index * sizeof(T), sizeof(T));
  return value;
}
uint32_t Word(const WrittenTensor& tensor, int64_t index) {
  return ValueAt<uint32_t>(tensor, index);
}
float F16At(const WrittenTensor& tensor, int64_t index) {
  return Fp16ToFp32(ValueAt<uint16_t>(tensor, index));
}
float Bf16At(const WrittenTensor& tensor, int64_t index) {
  return Bf16ToFp32(ValueAt<uint16_t>(tensor, index));
}

// Value k of a run of int32 words (word(n): the run's n-th word) packed at `bits` bits, read as
// AutoGPTQ's kernels read it: 32 / bits values per word for 2, 4 and 8 bits; for 3 bits each 32
// values fill three words, values 10 and 21 split across word boundaries.
template <typename WordAt>
uint32_t GptqValue(WordAt word, int64_t k, int bits) {
  if (bits != 3) {
    const int64_t per_word = 32 / bits;
    return (word(k / per_word) >> (bits * (k % per_word))) & ((1u << bits) - 1);
  }
  const int64_t base = k / 32 * 3, j = k % 32;
  if (j < 10) return (word(base) >> (3 * j)) & 7;
  if (j == 10) return (word(base) >> 30) | ((word(base + 1) & 1) << 2);
  if (j < 21) return (word(base + 1) >> (3 * (j - 11) + 1)) & 7;
  if (j == 21) return (word(base + 1) >> 31) | ((word(base + 2) & 3) << 1);
  return (word(base + 2) >> (3 * (j - 22) + 2)) & 7;
}

// Every GPTQ variant: qweight [cols · bits / 32, rows], qzeros [groups, rows · bits / 32] holding
// zero − 1 (gptq_v2: the zero), scales f16 [groups, rows], g_idx [cols]; W = scale · (q − zero)
// exactly.
struct GptqCase {
  const char* format;
  int bits;
  int64_t group_size;
  bool asym;
};
void PrintTo(const GptqCase& test, std::ostream* out) {
  *out << test.format << " bits " << test.bits << " group " << test.group_size
       << (test.asym ? " asym" : "");
}
class GptqWriterTest : public ::testing::TestWithParam<GptqCase> {};

TEST_P(GptqWriterTest, UnpacksToTheDequantizedValues) {
  const GptqCase& test = GetParam();
  const int64_t rows = 64, cols = 128;
  const std::vector<float> weight = RandomWeight(rows, cols, 1);
  const QuantizedHfLinear layer =
      Quantize(test.format, weight, rows, cols, test.bits, test.group_size, test.asym);
  auto parts = BySuffix(layer);
  ASSERT_EQ(parts.size(), 4u);
  const int bits = test.bits == 0 ? 4 : test.bits;
  const bool act_order = std::string(test.format) == "gptq-act";
  const int64_t stored_zero_offset = std::string(test.format) == "gptq-v2" ? 0 : 1;
  const int64_t group = test.group_size == -1  ? cols
                        : test.group_size != 0 ? test.group_size
                        : act_order            ? 64
                                               : 128;
  const int64_t groups = cols / group;
  ExpectTensor(parts["qweight"], "I32", {cols * bits / 32, rows}, 4);
  ExpectTensor(parts["qzeros"], "I32", {groups, rows * bits / 32}, 4);
  ExpectTensor(parts["scales"], "F16", {groups, rows}, 2);
  ExpectTensor(parts["g_idx"], "I32", {cols}, 4);
  if (::testing::Test::HasFailure()) return;

  std::vector<int64_t> group_counts(groups, 0);
  bool permuted = false;
  for (int64_t i = 0; i < cols; ++i) {
    const auto g = static_cast<int64_t>(Word(*parts["g_idx"], i));
    ASSERT_LT(g, groups);
    ++group_counts[g];
    permuted |= g != i / group;
  }
  for (int64_t count : group_counts) EXPECT_EQ(count, group);
  EXPECT_EQ(permuted, act_order);
  const bool symmetric = !test.asym && !act_order;
  float worst_error = 0.0f;
  for (int64_t o = 0; o < rows; ++o) {
    for (int64_t i = 0; i < cols; ++i) {
      const int64_t g = Word(*parts["g_idx"], i);
      // qweight packs along its column (the input dim), qzeros along its row (the output dim).
      const int64_t q =
          GptqValue([&](int64_t n) { return Word(*parts["qweight"], n * rows + o); }, i, bits);
      const int64_t zero =
          GptqValue([&](int64_t n) { return Word(*parts["qzeros"], g * (rows * bits / 32) + n); },
                    o, bits) +
          stored_zero_offset;
      if (symmetric) {
        ASSERT_EQ(zero, 1 << (bits - 1));
      }
      const float scale = F16At(*parts["scales"], g * rows + o);
      ASSERT_EQ(layer.dequantized[o * cols + i], scale * static_cast<float>(q - zero))
          << "row " << o << " col " << i;
      worst_error = std::max(
          worst_error, std::fabs(layer.dequantized[o * cols + i] - weight[o * cols + i]) / scale);
    }
  }
  // Round to nearest: within half a step, or one step where the range's top is clamped (the
  // symmetric range's top code, or an asymmetric zero rounded up).
  EXPECT_LE(worst_error, 1.0f + 1e-3f);
}

INSTANTIATE_TEST_SUITE_P(
    Formats, GptqWriterTest,
    ::testing::Values(GptqCase{"gptq", 0, 0, false}, GptqCase{"gptq", 4, 32, true},
                      GptqCase{"gptq", 2, 64, false}, GptqCase{"gptq", 3, 128, false},
                      GptqCase{"gptq", 3, 32, true}, GptqCase{"gptq", 8, -1, false},
                      GptqCase{"gptq-act", 0, 0, false}, GptqCase{"gptq-act", 8, 32, false},
                      GptqCase{"gptq-v2", 0, 0, false}, GptqCase{"gptq-v2", 4, 32, true},
                      GptqCase{"gptq-v2", 3, 64, true}, GptqCase{"gptq-v2", 2, -1, true}),
    [](const ::testing::TestParamInfo<GptqCase>& param) {
      const GptqCase& test = param.param;
      const std::string format = test.format;
      std::string name = format == "gptq" ? "Gptq" : format == "gptq-act" ? "GptqAct" : "GptqV2";
      name += "Bits" + std::to_string(test.bits) + "Group" +
              (test.group_size < 0 ? "Row" : std::to_string(test.group_size));
      return name + (test.asym ? "Asym" : "");
    });

// gptq-act gives the projections of one input (q, k, v; gate, up; an expert's w1, w3) one act
// order, as GPTQ does (its order comes from the Hessian of their shared input), and every other
// layer its own: their g_idx are equal exactly when they read the same input.
TEST(HfQuantWriterTest, GptqActOrdersAreSharedByTheProjectionsOfOneInput) {
  const int64_t rows = 32, cols = 256;
  const std::vector<float> weight = RandomWeight(rows, cols, 3);
  auto options = MakeHfQuantWriterOptions("gptq-act", 0, 0, false, 7);
  ASSERT_TRUE(options.ok()) << options.error();
  auto g_idx_of = [&](const std::string& module) {
    auto layer = QuantizeHfLinear(*options, module, weight.data(), rows, cols);
    EXPECT_TRUE(layer.ok()) << layer.error();
    for (const WrittenTensor& tensor : layer->tensors) {
      if (tensor.name == module + ".g_idx") return tensor.bytes;
    }
    ADD_FAILURE() << module << " has no g_idx";
    return std::vector<uint8_t>();
  };
  const std::string attention = "model.layers.1.self_attn.", mlp = "model.layers.1.mlp.",
                    expert = "model.layers.1.block_sparse_moe.experts.2.";
  const std::vector<uint8_t> qkv = g_idx_of(attention + "q_proj");
  EXPECT_EQ(g_idx_of(attention + "k_proj"), qkv);
  EXPECT_EQ(g_idx_of(attention + "v_proj"), qkv);
  const std::vector<uint8_t> gate_up = g_idx_of(mlp + "gate_proj");
  EXPECT_EQ(g_idx_of(mlp + "up_proj"), gate_up);
  const std::vector<uint8_t> w13 = g_idx_of(expert + "w1");
  EXPECT_EQ(g_idx_of(expert + "w3"), w13);
  // Other inputs, other orders: o_proj, down_proj, w2, another layer's q/k/v, another expert.
  const std::vector<std::vector<uint8_t>> orders = {
      qkv,
      gate_up,
      w13,
      g_idx_of(attention + "o_proj"),
      g_idx_of(mlp + "down_proj"),
      g_idx_of(expert + "w2"),
      g_idx_of("model.layers.2.self_attn.q_proj"),
      g_idx_of("model.layers.1.block_sparse_moe.experts.3.w1")};
  for (size_t a = 0; a < orders.size(); ++a) {
    for (size_t b = a + 1; b < orders.size(); ++b) EXPECT_NE(orders[a], orders[b]) << a << " " << b;
  }
}

TEST(HfQuantWriterTest, GptqThreeBitWordsFollowAutoGptqLayout) {
  // Rows of 32 inputs whose codes are known: i % 8 − 3.5, so max|w| = 3.5 and the symmetric
  // 3-bit scale is 2 · 3.5 / 7 = 1 with zero 4.
  const int64_t rows = 32, cols = 32;
  std::vector<float> weight(rows * cols, 0.0f);
  for (int64_t o = 0; o < rows; ++o) {
    for (int64_t i = 0; i < cols; ++i) weight[o * cols + i] = static_cast<float>(i % 8) - 3.5f;
  }
  const QuantizedHfLinear layer = Quantize("gptq", weight, rows, cols, 3, 32);
  auto parts = BySuffix(layer);
  // q = round(i % 8 − 3.5) + 4 (ties to even), at most 7.
  std::vector<uint32_t> codes(cols);
  for (int64_t i = 0; i < cols; ++i) {
    codes[i] = static_cast<uint32_t>(
        std::min(std::nearbyint(static_cast<float>(i % 8) - 3.5f) + 4.0f, 7.0f));
  }
  // The words as AutoGPTQ's pack loop builds them, for column 0.
  uint32_t words[3] = {0, 0, 0};
  for (int j = 0; j < 10; ++j) words[0] |= codes[j] << (3 * j);
  words[0] |= codes[10] << 30;
  words[1] |= (codes[10] >> 2) & 1;
  for (int j = 11; j < 21; ++j) words[1] |= codes[j] << (3 * (j - 11) + 1);
  words[1] |= codes[21] << 31;
  words[2] |= (codes[21] >> 1) & 3;
  for (int j = 22; j < 32; ++j) words[2] |= codes[j] << (3 * (j - 22) + 2);
  for (int w = 0; w < 3; ++w) EXPECT_EQ(Word(*parts["qweight"], w * rows), words[w]) << w;
}

// gptq_v2 stores the zero itself, so a group with no negative value gets the zero 0 (its lowest
// value, 0, is code 0); checkpoint_format gptq stores zero − 1 and cannot hold it: 1 at least.
TEST(HfQuantWriterTest, GptqV2StoresAZeroOfZero) {
  const int64_t rows = 32, cols = 64;
  std::vector<float> weight = RandomWeight(rows, cols, 11);
  for (float& value : weight) value = std::fabs(value);
  for (const char* format : {"gptq", "gptq-v2"}) {
    SCOPED_TRACE(format);
    const QuantizedHfLinear layer = Quantize(format, weight, rows, cols, 4, 32, true);
    auto parts = BySuffix(layer);
    ASSERT_NE(parts["qzeros"], nullptr);
    const bool v2 = std::string(format) == "gptq-v2";
    for (int64_t k = 0; k < 2 * rows / 8; ++k) {
      // v2: every zero 0; gptq: zero − 1 = 0, a zero of 1.
      ASSERT_EQ(Word(*parts["qzeros"], k), 0u) << k;
    }
    for (int64_t o = 0; o < rows; ++o) {
      for (int64_t i = 0; i < cols; ++i) {
        const float scale = F16At(*parts["scales"], (i / 32) * rows + o);
        const int64_t q = (Word(*parts["qweight"], (i / 8) * rows + o) >> (4 * (i % 8))) & 15;
        ASSERT_EQ(layer.dequantized[o * cols + i], scale * static_cast<float>(q - (v2 ? 0 : 1)));
      }
    }
  }
}

// AutoAWQ GEMM: qweight [cols, rows / 8] with nibble j holding output 8k + (0 2 4 6 1 3 5 7)[j],
// qzeros [groups, rows / 8] likewise (zeros as they are), scales f16 [groups, rows].
TEST(HfQuantWriterTest, AwqUnpacksInItsInterleavedOrder) {
  const int64_t rows = 32, cols = 256;
  const std::vector<float> weight = RandomWeight(rows, cols, 2);
  const QuantizedHfLinear layer = Quantize("awq", weight, rows, cols);
  auto parts = BySuffix(layer);
  ASSERT_EQ(parts.size(), 3u);
  ExpectTensor(parts["qweight"], "I32", {cols, rows / 8}, 4);
  ExpectTensor(parts["qzeros"], "I32", {2, rows / 8}, 4);
  ExpectTensor(parts["scales"], "F16", {2, rows}, 2);
  if (::testing::Test::HasFailure()) return;
  constexpr int kOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  auto nibble_of = [&](int64_t o) {
    for (int j = 0; j < 8; ++j) {
      if (kOrder[j] == o % 8) return j;
    }
    return -1;
  };
  for (int64_t i = 0; i < cols; ++i) {
    for (int64_t o = 0; o < rows; ++o) {
      const int64_t g = i / 128;
      const int shift = 4 * nibble_of(o);
      const auto q =
          static_cast<int64_t>((Word(*parts["qweight"], i * (rows / 8) + o / 8) >> shift) & 15);
      const auto zero =
          static_cast<int64_t>((Word(*parts["qzeros"], g * (rows / 8) + o / 8) >> shift) & 15);
      const float scale = F16At(*parts["scales"], g * rows + o);
      ASSERT_EQ(layer.dequantized[o * cols + i], static_cast<float>(q - zero) * scale);
      ASSERT_LE(std::fabs(layer.dequantized[o * cols + i] - weight[o * cols + i]),
                0.5f * scale * 1.001f);
    }
  }
}

// AutoAWQ GEMV (WQLinear_GEMV): qweight [rows, cols / 8] with nibble j of word k holding input
// 8k + j; per row, zeros packed the same way and f16 scales, both padded with zeros to
// calculate_zeros_width: ⌈groups / 8⌉ words rounded up to a multiple of 4 for groups of 32.
TEST(HfQuantWriterTest, AwqGemvPacksAlongTheInputInOrder) {
  const int64_t rows = 16, cols = 384, groups = 12, width = 4;
  const std::vector<float> weight = RandomWeight(rows, cols, 12);
  const QuantizedHfLinear layer = Quantize("awq-gemv", weight, rows, cols, 0, 32);
  auto parts = BySuffix(layer);
  ASSERT_EQ(parts.size(), 3u);
  ExpectTensor(parts["qweight"], "I32", {rows, cols / 8}, 4);
  ExpectTensor(parts["qzeros"], "I32", {rows, width}, 4);
  ExpectTensor(parts["scales"], "F16", {rows, width * 8}, 2);
  if (::testing::Test::HasFailure()) return;
  for (int64_t o = 0; o < rows; ++o) {
    for (int64_t g = groups; g < width * 8; ++g) {
      ASSERT_EQ(F16At(*parts["scales"], o * width * 8 + g), 0.0f);
      ASSERT_EQ((Word(*parts["qzeros"], o * width + g / 8) >> (4 * (g % 8))) & 15, 0u);
    }
    for (int64_t i = 0; i < cols; ++i) {
      const int64_t g = i / 32;
      const auto q = static_cast<int64_t>(
          (Word(*parts["qweight"], o * (cols / 8) + i / 8) >> (4 * (i % 8))) & 15);
      const auto zero =
          static_cast<int64_t>((Word(*parts["qzeros"], o * width + g / 8) >> (4 * (g % 8))) & 15);
      const float scale = F16At(*parts["scales"], o * width * 8 + g);
      ASSERT_EQ(layer.dequantized[o * cols + i], static_cast<float>(q - zero) * scale);
      ASSERT_LE(std::fabs(layer.dequantized[o * cols + i] - weight[o * cols + i]),
                0.5f * scale * 1.001f);
    }
  }
}

// fp8: e4m3 weight [rows, cols] with a f32 scalar weight_scale; fp8-block: weight_scale_inv
// [⌈rows / 128⌉, ⌈cols / 128⌉]. W = e4m3 · scale.
TEST(HfQuantWriterTest, Fp8PerTensorAndPerBlock) {
  const int64_t rows = 192, cols = 320;
  const std::vector<float> weight = RandomWeight(rows, cols, 3);
  for (const char* format : {"fp8", "fp8-block"}) {
    SCOPED_TRACE(format);
    const bool blocks = std::string(format) == "fp8-block";
    const QuantizedHfLinear layer = Quantize(format, weight, rows, cols);
    auto parts = BySuffix(layer);
    ASSERT_EQ(parts.size(), 2u);
    ExpectTensor(parts["weight"], "F8_E4M3", {rows, cols}, 1);
    const WrittenTensor* scales = parts[blocks ? "weight_scale_inv" : "weight_scale"];
    ExpectTensor(scales, "F32", blocks ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{}, 4);
    if (::testing::Test::HasFailure()) return;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const uint8_t code = parts["weight"]->bytes[r * cols + c];
        ASSERT_FALSE(IsFp8E4m3Nan(code));
        const float scale = ValueAt<float>(*scales, blocks ? (r / 128) * 3 + c / 128 : 0);
        ASSERT_EQ(layer.dequantized[r * cols + c], DecodeFp8E4m3(code) * scale);
        // 3 mantissa bits: within 1/16 relative, or the subnormal step 2^-10 · scale.
        ASSERT_LE(std::fabs(layer.dequantized[r * cols + c] - weight[r * cols + c]),
                  std::max(std::fabs(weight[r * cols + c]) / 16.0f, scale / 1024.0f));
      }
    }
  }
}

// compressed-tensors float-quantized: e4m3 weight [rows, cols], bf16 weight_scale [rows, 1]
// (ct-fp8) or [1] (ct-fp8-tensor), each max|w| / 448 of its row or tensor; W = e4m3 · scale.
TEST(HfQuantWriterTest, CompressedTensorsFp8PerChannelAndPerTensor) {
  const int64_t rows = 24, cols = 96;
  std::vector<float> weight = RandomWeight(rows, cols, 13);
  for (int64_t c = 0; c < cols; ++c) weight[5 * cols + c] *= 40.0f;  // one row far larger
  for (const char* format : {"ct-fp8", "ct-fp8-tensor"}) {
    SCOPED_TRACE(format);
    const bool per_channel = std::string(format) == "ct-fp8";
    const QuantizedHfLinear layer = Quantize(format, weight, rows, cols);
    auto parts = BySuffix(layer);
    ASSERT_EQ(parts.size(), 2u);
    ExpectTensor(parts["weight"], "F8_E4M3", {rows, cols}, 1);
    ExpectTensor(parts["weight_scale"], "BF16",
                 per_channel ? std::vector<int64_t>{rows, 1} : std::vector<int64_t>{1}, 2);
    if (::testing::Test::HasFailure()) return;
    for (int64_t r = 0; r < rows; ++r) {
      float row_max = 0.0f;
      for (int64_t c = 0; c < cols; ++c) {
        row_max = std::max(row_max, std::fabs(weight[r * cols + c]));
      }
      const float scale = Bf16At(*parts["weight_scale"], per_channel ? r : 0);
      if (per_channel) {
        EXPECT_NEAR(scale, row_max / 448.0f, row_max / 448.0f / 128.0f);
      }
      for (int64_t c = 0; c < cols; ++c) {
        const uint8_t code = parts["weight"]->bytes[r * cols + c];
        ASSERT_FALSE(IsFp8E4m3Nan(code));
        ASSERT_EQ(layer.dequantized[r * cols + c], DecodeFp8E4m3(code) * scale);
      }
    }
  }
}

// compressed-tensors W8A8: int8 weight [rows, cols], bf16 weight_scale [rows, 1].
TEST(HfQuantWriterTest, W8A8IsInt8PerChannel) {
  const int64_t rows = 16, cols = 64;
  const std::vector<float> weight = RandomWeight(rows, cols, 4);
  const QuantizedHfLinear layer = Quantize("w8a8", weight, rows, cols);
  auto parts = BySuffix(layer);
  ASSERT_EQ(parts.size(), 2u);
  ExpectTensor(parts["weight"], "I8", {rows, cols}, 1);
  ExpectTensor(parts["weight_scale"], "BF16", {rows, 1}, 2);
  if (::testing::Test::HasFailure()) return;
  for (int64_t r = 0; r < rows; ++r) {
    const float scale = Bf16At(*parts["weight_scale"], r);
    bool reaches_127 = false;
    for (int64_t c = 0; c < cols; ++c) {
      const auto q = static_cast<int8_t>(parts["weight"]->bytes[r * cols + c]);
      reaches_127 |= std::abs(q) >= 126;
      ASSERT_EQ(layer.dequantized[r * cols + c], static_cast<float>(q) * scale);
    }
    EXPECT_TRUE(reaches_127) << "row " << r << " does not use the int8 range";
  }
}

// compressed-tensors pack-quantized: weight_packed int32 [rows, cols · bits / 32] of q + 2^(b−1)
// (value j of a word at bits · j), weight_scale bf16 [rows, groups], weight_shape int64 {rows,
// cols}; asym adds weight_zero_point int32 [rows · bits / 32, groups] packed along the rows.
struct PackedCase {
  int bits;
  int64_t group_size;
  bool asym;
};
void PrintTo(const PackedCase& test, std::ostream* out) {
  *out << "w4a16 bits " << test.bits << " group " << test.group_size << (test.asym ? " asym" : "");
}
class PackedWriterTest : public ::testing::TestWithParam<PackedCase> {};

TEST_P(PackedWriterTest, UnpacksToTheDequantizedValues) {
  const PackedCase& test = GetParam();
  const int64_t rows = 32, cols = 256;
  const std::vector<float> weight = RandomWeight(rows, cols, 5);
  const QuantizedHfLinear layer =
      Quantize("w4a16", weight, rows, cols, test.bits, test.group_size, test.asym);
  auto parts = BySuffix(layer);
  const int bits = test.bits == 0 ? 4 : test.bits;
  const int64_t group = test.group_size == -1 ? cols : test.group_size == 0 ? 128 : test.group_size;
  const int64_t groups = cols / group, per_word = 32 / bits;
  const uint32_t mask = (1u << bits) - 1, offset = 1u << (bits - 1);
  ASSERT_EQ(parts.size(), test.asym ? 4u : 3u);
  ExpectTensor(parts["weight_packed"], "I32", {rows, cols / per_word}, 4);
  ExpectTensor(parts["weight_scale"], "BF16", {rows, groups}, 2);
  ExpectTensor(parts["weight_shape"], "I64", {2}, 8);
  if (test.asym) ExpectTensor(parts["weight_zero_point"], "I32", {rows / per_word, groups}, 4);
  if (::testing::Test::HasFailure()) return;
  EXPECT_EQ(ValueAt<int64_t>(*parts["weight_shape"], 0), rows);
  EXPECT_EQ(ValueAt<int64_t>(*parts["weight_shape"], 1), cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t g = c / group;
      const uint32_t word = Word(*parts["weight_packed"], r * (cols / per_word) + c / per_word);
      const int64_t q = static_cast<int64_t>((word >> (bits * (c % per_word))) & mask) - offset;
      int64_t zero = 0;
      if (test.asym) {
        const uint32_t zero_word = Word(*parts["weight_zero_point"], (r / per_word) * groups + g);
        zero = static_cast<int64_t>((zero_word >> (bits * (r % per_word))) & mask) - offset;
      }
      const float scale = Bf16At(*parts["weight_scale"], r * groups + g);
      ASSERT_EQ(layer.dequantized[r * cols + c], static_cast<float>(q - zero) * scale);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, PackedWriterTest,
                         ::testing::Values(PackedCase{0, 0, false}, PackedCase{4, 32, true},
                                           PackedCase{8, 128, false}, PackedCase{4, -1, true},
                                           PackedCase{8, 64, true}),
                         [](const ::testing::TestParamInfo<PackedCase>& param) {
                           const PackedCase& test = param.param;
                           return "Bits" + std::to_string(test.bits) + "Group" +
                                  (test.group_size < 0 ? "Row" : std::to_string(test.group_size)) +
                                  (test.asym ? "Asym" : "");
                         });

// bitsandbytes NF4 with double quantization: W = quant_map[nibble] · absmax, the nibbles of the
// row-major weight two per byte (first high), absmax of block b = nested_quant_map[absmax code]
// · nested_absmax[b / 256] + nested_offset (from the quant_state JSON).
TEST(HfQuantWriterTest, BitsAndBytesNf4UnpacksWithItsQuantState) {
  const int64_t rows = 64, cols = 320;  // 320 blocks of 64: two nested blocks
  const std::vector<float> weight = RandomWeight(rows, cols, 6);
  const QuantizedHfLinear layer = Quantize("bnb-nf4", weight, rows, cols);
  auto parts = BySuffix(layer);
  ASSERT_EQ(parts.size(), 6u);
  const int64_t count = rows * cols, blocks = count / 64;
  ExpectTensor(parts["weight"], "U8", {count / 2, 1}, 1);
  ExpectTensor(parts["weight.absmax"], "U8", {blocks}, 1);
  ExpectTensor(parts["weight.nested_absmax"], "F32", {2}, 4);
  ExpectTensor(parts["weight.nested_quant_map"], "F32", {256}, 4);
  ExpectTensor(parts["weight.quant_map"], "F32", {16}, 4);
  const WrittenTensor* state_tensor = parts["weight.quant_state.bitsandbytes__nf4"];
  ASSERT_NE(state_tensor, nullptr);
  EXPECT_EQ(state_tensor->dtype, "U8");
  if (::testing::Test::HasFailure()) return;
  const auto state = nlohmann::json::parse(state_tensor->bytes.begin(), state_tensor->bytes.end());
  EXPECT_EQ(state["quant_type"], "nf4");
  EXPECT_EQ(state["blocksize"], 64);
  EXPECT_EQ(state["nested_blocksize"], 256);
  EXPECT_EQ(state["shape"], nlohmann::json({rows, cols}));
  const auto offset = static_cast<float>(state["nested_offset"].get<double>());
  const WrittenTensor& nested_map = *parts["weight.nested_quant_map"];
  for (int k = 1; k < 256; ++k)
    ASSERT_LT(ValueAt<float>(nested_map, k - 1), ValueAt<float>(nested_map, k));
  EXPECT_EQ(ValueAt<float>(nested_map, 255), 1.0f);
  EXPECT_EQ(ValueAt<float>(*parts["weight.quant_map"], 0), -1.0f);
  EXPECT_EQ(ValueAt<float>(*parts["weight.quant_map"], 7), 0.0f);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t block = i / 64;
    const float absmax = ValueAt<float>(nested_map, parts["weight.absmax"]->bytes[block]) *
                             ValueAt<float>(*parts["weight.nested_absmax"], block / 256) +
                         offset;
    const uint8_t byte = parts["weight"]->bytes[i / 2];
    const int code = i % 2 == 0 ? byte >> 4 : byte & 15;
    ASSERT_EQ(layer.dequantized[i], ValueAt<float>(*parts["weight.quant_map"], code) * absmax);
    // NF4's widest gap is 0.30 of the block's absmax (-1 to -0.696).
    ASSERT_LE(std::fabs(layer.dequantized[i] - weight[i]), 0.16f * absmax);
  }
}

// bitsandbytes FP4: the tensors of NF4 with quant_map bitsandbytes' FP4 levels (magnitudes 0,
// 0.0625, 8, 12, 4, 6, 2, 3 over 12 for codes 0-7, negated for 8-15) and quant_type fp4; each
// value the nearest level of w / absmax.
TEST(HfQuantWriterTest, BitsAndBytesFp4UsesItsLevels) {
  const int64_t rows = 16, cols = 128;
  const std::vector<float> weight = RandomWeight(rows, cols, 14);
  const QuantizedHfLinear layer = Quantize("bnb-fp4", weight, rows, cols);
  auto parts = BySuffix(layer);
  ASSERT_EQ(parts.size(), 6u);
  const WrittenTensor* state_tensor = parts["weight.quant_state.bitsandbytes__fp4"];
  ASSERT_NE(state_tensor, nullptr);
  const auto state = nlohmann::json::parse(state_tensor->bytes.begin(), state_tensor->bytes.end());
  EXPECT_EQ(state["quant_type"], "fp4");
  const WrittenTensor& quant_map = *parts["weight.quant_map"];
  const float magnitudes[8] = {0.0f, 0.0625f, 8.0f, 12.0f, 4.0f, 6.0f, 2.0f, 3.0f};
  for (int code = 0; code < 16; ++code) {
    const float level = (code < 8 ? 1.0f : -1.0f) * magnitudes[code % 8] / 12.0f;
    EXPECT_EQ(ValueAt<float>(quant_map, code), level) << code;
  }
  const auto offset = static_cast<float>(state["nested_offset"].get<double>());
  for (int64_t i = 0; i < rows * cols; ++i) {
    const int64_t block = i / 64;
    const float absmax =
        ValueAt<float>(*parts["weight.nested_quant_map"], parts["weight.absmax"]->bytes[block]) *
            ValueAt<float>(*parts["weight.nested_absmax"], 0) +
        offset;
    const uint8_t byte = parts["weight"]->bytes[i / 2];
    const int code = i % 2 == 0 ? byte >> 4 : byte & 15;
    ASSERT_EQ(layer.dequantized[i], ValueAt<float>(quant_map, code) * absmax);
    // No other level is nearer to w / block max (the block's absmax before double quantization).
    float block_max = 0.0f;
    for (int64_t k = block * 64; k < block * 64 + 64; ++k) {
      block_max = std::max(block_max, std::fabs(weight[k]));
    }
    const float x = weight[i] / block_max;
    for (int other = 0; other < 16; ++other) {
      ASSERT_LE(std::fabs(ValueAt<float>(quant_map, code) - x),
                std::fabs(ValueAt<float>(quant_map, other) - x) + 1e-6f)
          << "value " << i << " code " << code << " other " << other;
    }
  }
}

// bitsandbytes 8-bit: int8 weight, f32 SCB [rows] (row absmax), W = q · SCB / 127.
TEST(HfQuantWriterTest, BitsAndBytesInt8) {
  const int64_t rows = 8, cols = 64;
  const std::vector<float> weight = RandomWeight(rows, cols, 8);
  const QuantizedHfLinear layer = Quantize("bnb-int8", weight, rows, cols);
  auto parts = BySuffix(layer);
  ExpectTensor(parts["weight"], "I8", {rows, cols}, 1);
  ExpectTensor(parts["SCB"], "F32", {rows}, 4);
  ExpectTensor(parts["weight_format"], "U8", {}, 1);
  if (::testing::Test::HasFailure()) return;
  for (int64_t r = 0; r < rows; ++r) {
    const float absmax = ValueAt<float>(*parts["SCB"], r);
    float expected_absmax = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      expected_absmax = std::max(expected_absmax, std::fabs(weight[r * cols + c]));
      const auto q = static_cast<int8_t>(parts["weight"]->bytes[r * cols + c]);
      ASSERT_EQ(layer.dequantized[r * cols + c], static_cast<float>(q) * absmax / 127.0f);
    }
    EXPECT_EQ(absmax, expected_absmax);
  }
}

TEST(HfQuantWriterTest, OptionsTakeEachFormatsDefaultsAndRefuseWhatDoesNotApply) {
  auto gptq_act = MakeHfQuantWriterOptions("gptq-act", 0, 0, false, 1);
  ASSERT_TRUE(gptq_act.ok());
  EXPECT_EQ(gptq_act->group_size, 64);
  EXPECT_FALSE(gptq_act->symmetric);
  EXPECT_EQ(gptq_act->bits, 4);
  EXPECT_TRUE(MakeHfQuantWriterOptions("gptq", 3, -1, true, 1).ok());
  for (auto [format, bits, group, asym, message] :
       {std::tuple{"gptq", 5, 0, false, "--bits 5"}, std::tuple{"awq", 8, 0, false, "--bits 8"},
        std::tuple{"fp8", 0, 128, false, "--group-size 128"},
        std::tuple{"gptq", 0, -2, false, "--group-size -2"},
        std::tuple{"w8a8", 0, 0, true, "--asym"}, std::tuple{"int3", 0, 0, false, "'int3'"},
        std::tuple{"awq-gemv", 0, 16, false, "--group-size 16 does not apply to awq-gemv"},
        std::tuple{"ct-fp8", 0, 0, true, "--asym"}, std::tuple{"bnb-fp4", 4, 0, false, "--bits"},
        std::tuple{"gptq-v2", 6, 0, false, "--bits 6"}}) {
    auto options = MakeHfQuantWriterOptions(format, bits, group, asym, 1);
    ASSERT_FALSE(options.ok()) << format;
    EXPECT_NE(options.error().find(message), std::string::npos) << options.error();
  }
}

TEST(HfQuantWriterTest, FormatNamesAreTheOnesOptionsTake) {
  const std::string names = HfQuantFormatNames();
  EXPECT_EQ(names,
            "gptq|gptq-act|gptq-v2|awq|awq-gemv|fp8|fp8-block|w8a8|w4a16|ct-fp8|ct-fp8-tensor|"
            "bnb-nf4|bnb-fp4|bnb-int8");
  for (size_t begin = 0, end = 0; begin < names.size(); begin = end + 1) {
    end = std::min(names.find('|', begin), names.size());
    const std::string name = names.substr(begin, end - begin);
    EXPECT_TRUE(MakeHfQuantWriterOptions(name, 0, 0, false, 1).ok()) << name;
  }
  auto unknown = MakeHfQuantWriterOptions("int3", 0, 0, false, 1);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().find("(known: " + names + ")"), std::string::npos) << unknown.error();
}

TEST(HfQuantWriterTest, ShapesTheFormatCannotHoldAreErrorsNamingTheModule) {
  const std::vector<float> weight = RandomWeight(32, 96, 9);
  auto gptq = MakeHfQuantWriterOptions("gptq", 0, 0, false, 1);  // group 128 > 96 columns
  auto layer = QuantizeHfLinear(*gptq, "model.layers.1.self_attn.o_proj", weight.data(), 32, 96);
  ASSERT_FALSE(layer.ok());
  EXPECT_NE(layer.error().find("model.layers.1.self_attn.o_proj"), std::string::npos);
  EXPECT_NE(layer.error().find("group size 128"), std::string::npos) << layer.error();
  auto three_bit = MakeHfQuantWriterOptions("gptq", 3, 32, false, 1);
  auto odd = QuantizeHfLinear(*three_bit, "m", weight.data(), 24, 128);  // 24 rows · 3 bits
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.error().find("output features"), std::string::npos) << odd.error();
}

TEST(HfQuantWriterTest, OnlyDecoderLinearWeightsAreQuantized) {
  for (const char* name :
       {"model.layers.0.self_attn.q_proj.weight", "model.layers.11.mlp.down_proj.weight",
        "model.layers.2.mlp.experts.7.gate_proj.weight", "model.layers.0.self_attn.qkv_proj.weight",
        "model.layers.3.block_sparse_moe.experts.1.w2.weight",
        "model.layers.0.mlp.gate_up_proj.weight"}) {
    EXPECT_TRUE(IsQuantizedHfLinear(name, 2)) << name;
  }
  for (const char* name :
       {"model.embed_tokens.weight", "lm_head.weight", "model.layers.0.input_layernorm.weight",
        "model.layers.0.mlp.gate.weight", "model.layers.0.block_sparse_moe.gate.weight",
        "model.layers.0.self_attn.q_norm.weight", "model.layers.0.self_attn.q_proj.bias",
        "model.layers.0.mlp.shared_expert_gate.weight"}) {
    EXPECT_FALSE(IsQuantizedHfLinear(name, 2)) << name;
  }
  EXPECT_FALSE(IsQuantizedHfLinear("model.layers.0.mlp.experts.gate_up_proj.weight", 3));
}

TEST(HfQuantWriterTest, ConfigsAreTheToolsOwn) {
  auto json_of = [](const char* format, int bits = 0, int64_t group = 0, bool asym = false) {
    return HfQuantizationConfigJson(*MakeHfQuantWriterOptions(format, bits, group, asym, 1));
  };
  const nlohmann::json gptq = json_of("gptq-act", 3);
  EXPECT_EQ(gptq["quant_method"], "gptq");
  EXPECT_EQ(gptq["bits"], 3);
  EXPECT_EQ(gptq["group_size"], 64);
  EXPECT_EQ(gptq["desc_act"], true);
  EXPECT_EQ(gptq["sym"], false);
  EXPECT_EQ(gptq["checkpoint_format"], "gptq");
  EXPECT_EQ(json_of("gptq-v2")["checkpoint_format"], "gptq_v2");
  EXPECT_EQ(json_of("awq")["version"], "gemm");
  EXPECT_EQ(json_of("awq-gemv", 0, 64)["version"], "gemv");
  EXPECT_EQ(json_of("awq-gemv", 0, 64)["group_size"], 64);
  EXPECT_EQ(json_of("fp8-block")["weight_block_size"], nlohmann::json({128, 128}));
  EXPECT_FALSE(json_of("fp8").contains("weight_block_size"));
  const nlohmann::json w8a8 = json_of("w8a8")["config_groups"]["group_0"];
  EXPECT_EQ(json_of("w8a8")["format"], "int-quantized");
  EXPECT_EQ(w8a8["weights"]["strategy"], "channel");
  EXPECT_EQ(w8a8["input_activations"]["strategy"], "token");
  EXPECT_EQ(w8a8["input_activations"]["dynamic"], true);
  const nlohmann::json w4a16 = json_of("w4a16", 0, -1, true)["config_groups"]["group_0"];
  EXPECT_EQ(w4a16["weights"]["strategy"], "channel");
  EXPECT_EQ(w4a16["weights"]["symmetric"], false);
  EXPECT_TRUE(w4a16["input_activations"].is_null());
  EXPECT_EQ(json_of("w4a16")["config_groups"]["group_0"]["weights"]["group_size"], 128);
  EXPECT_EQ(json_of("bnb-nf4")["bnb_4bit_use_double_quant"], true);
  EXPECT_EQ(json_of("bnb-int8")["load_in_8bit"], true);
  EXPECT_EQ(json_of("bnb-fp4")["bnb_4bit_quant_type"], "fp4");
  EXPECT_EQ(json_of("bnb-fp4")["load_in_4bit"], true);
  for (const char* format : {"ct-fp8", "ct-fp8-tensor"}) {
    const nlohmann::json config = json_of(format);
    const nlohmann::json group = config["config_groups"]["group_0"];
    EXPECT_EQ(config["format"], "float-quantized");
    EXPECT_EQ(group["weights"]["type"], "float");
    EXPECT_EQ(group["weights"]["num_bits"], 8);
    EXPECT_EQ(group["weights"]["strategy"], std::string(format) == "ct-fp8" ? "channel" : "tensor");
    EXPECT_EQ(group["input_activations"]["type"], "float");
    EXPECT_EQ(group["input_activations"]["strategy"], "token");
    EXPECT_EQ(group["input_activations"]["dynamic"], true);
  }
}

// The writer end to end: a random GGUF written as a quantized directory and its dequantized
// twin; the twin holds F32 linear weights equal to the layer's dequantized values, the rest is
// the same in both.
TEST(HfQuantWriterTest, WritesTheQuantizedDirectoryAndItsDequantizedTwin) {
  const fs::path root =
      fs::path(::testing::TempDir()) / ("hf_quant_writer_" + std::to_string(::getpid()));
  fs::create_directories(root);
  const std::string gguf_path = (root / "model.gguf").string();
  Status written = WriteRandomModel(
      {.shape = "llama-d256",
       .dtype = "bf16",
       .vocab_path = std::string(VLLM_SHARED_DIR) + "/vocab/ggml-vocab-llama-spm.gguf",
       .output_path = gguf_path,
       .seed = 5,
       .num_layers_override = 1});
  ASSERT_TRUE(written.ok()) << written.message();
  auto gguf = GgufFile::Open(gguf_path);
  ASSERT_TRUE(gguf.ok()) << gguf.error();
  auto options = MakeHfQuantWriterOptions("gptq", 0, 0, false, 1);
  Status exported = WriteQuantizedHfCheckpointFromGguf(
      **gguf, (root / "q").string(), std::string(VLLM_SHARED_DIR) + "/tokenizers/llama2", *options,
      (root / "deq").string());
  ASSERT_TRUE(exported.ok()) << exported.message();

  auto quantized = SafetensorsFile::Open((root / "q" / "model.safetensors").string());
  auto twin = SafetensorsFile::Open((root / "deq" / "model.safetensors").string());
  ASSERT_TRUE(quantized.ok() && twin.ok());
  EXPECT_EQ((*quantized)->tensors().size(), (*twin)->tensors().size() + 7 * 3);
  for (const SafetensorsTensor& tensor : (*twin)->tensors()) {
    if (IsQuantizedHfLinear(tensor.name, tensor.shape.size())) {
      EXPECT_EQ(tensor.type, GgmlType::kF32) << tensor.name;
      const std::string module = tensor.name.substr(0, tensor.name.size() - 7);
      EXPECT_EQ((*quantized)->FindTensor(tensor.name), nullptr);
      const SafetensorsTensor* qweight = (*quantized)->FindTensor(module + ".qweight");
      ASSERT_NE(qweight, nullptr) << module;
      EXPECT_EQ(qweight->dtype, "I32");
      EXPECT_EQ(qweight->shape, (std::vector<int64_t>{tensor.shape[1] / 8, tensor.shape[0]}));
    } else {
      const SafetensorsTensor* same = (*quantized)->FindTensor(tensor.name);
      ASSERT_NE(same, nullptr) << tensor.name;
      EXPECT_EQ(same->num_bytes, tensor.num_bytes);
      EXPECT_EQ(std::memcmp(same->data, tensor.data, tensor.num_bytes), 0) << tensor.name;
    }
  }
  auto read_config = [](const fs::path& path) {
    std::ifstream file(path / "config.json");
    return nlohmann::json::parse(file);
  };
  EXPECT_EQ(read_config(root / "q")["quantization_config"]["quant_method"], "gptq");
  EXPECT_FALSE(read_config(root / "deq").contains("quantization_config"));
  EXPECT_TRUE(fs::exists(root / "deq" / "tokenizer.json"));
  fs::remove_all(root);
}

}  // namespace
}  // namespace vllm
