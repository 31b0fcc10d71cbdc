// The FP8, compressed-tensors and bitsandbytes converters on thousands of randomly damaged layers
// (a part's shape, dtype, size or bytes changed, or the part removed): each result is either a
// weight whose bytes fill its shape or an error naming the module, never a crash (run it under
// ASan to check every read stays inside its part).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <string>

#include "common/half.h"
#include "model/hf_quant/quantized_linear.h"
#include "model/hf_quant/test_parts.h"

namespace vllm {
namespace {

using test::LayerParts;

const char* kModule = "model.layers.3.mlp.gate_proj";

// One stored part: its bytes, dtype and shape (num_bytes: the bytes' size unless truncated).
struct PartSpec {
  std::string suffix;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  int64_t num_bytes = -1;
};

template <typename T>
PartSpec Spec(const std::string& suffix, const std::string& dtype, std::vector<int64_t> shape,
              const std::vector<T>& values) {
  PartSpec spec{suffix, dtype, std::move(shape), std::vector<uint8_t>(values.size() * sizeof(T))};
  std::memcpy(spec.bytes.data(), values.data(), spec.bytes.size());
  return spec;
}

std::vector<uint8_t> Filled(size_t count, uint8_t value) {
  return std::vector<uint8_t>(count, value);
}

// A damaged copy of `parts`: one mutation of one part.
std::vector<PartSpec> Damage(std::vector<PartSpec> parts, std::mt19937& rng) {
  static const char* kDtypes[] = {"F32", "F16", "BF16", "U8", "I8", "F8_E4M3", "I32", "I64"};
  PartSpec& part = parts[rng() % parts.size()];
  switch (rng() % 6) {
    case 0:  // a dimension one more or one less, or zero
      if (!part.shape.empty()) {
        int64_t& size = part.shape[rng() % part.shape.size()];
        size = rng() % 3 == 0 ? 0 : size + (rng() % 2 == 0 ? 1 : -1);
      }
      break;
    case 1:  // a dimension dropped or added
      if (rng() % 2 == 0 && !part.shape.empty()) {
        part.shape.pop_back();
      } else {
        part.shape.push_back(1);
      }
      break;
    case 2:
      part.dtype = kDtypes[rng() % std::size(kDtypes)];
      break;
    case 3:
      part.num_bytes = part.bytes.empty() ? 0 : rng() % part.bytes.size();
      break;
    case 4:  // random bytes (NaN codes and scales, codes out of range, broken JSON)
      for (int i = 0; i < 4 && !part.bytes.empty(); ++i) {
        part.bytes[rng() % part.bytes.size()] = static_cast<uint8_t>(rng());
      }
      break;
    default:
      parts.erase(parts.begin() + (&part - parts.data()));
      break;
  }
  return parts;
}

// Converts `damaged` copies of `layer` and checks each outcome.
void ConvertDamaged(
    const std::vector<PartSpec>& layer,
    const std::function<Expected<ConvertedLinear>(const QuantizedLinearTensors&)>& convert,
    uint32_t seed) {
  std::mt19937 rng(seed);
  for (int trial = -1; trial < 1500; ++trial) {
    const std::vector<PartSpec> parts = trial < 0 ? layer : Damage(layer, rng);
    LayerParts stored(kModule);
    for (const PartSpec& part : parts) {
      stored.Add(part.suffix, part.dtype, part.shape, part.bytes, part.num_bytes);
    }
    auto linear = convert(stored.layer());
    if (trial < 0) {
      ASSERT_TRUE(linear.ok()) << "the undamaged layer: " << linear.error();
    }
    if (!linear.ok()) {
      ASSERT_NE(linear.error().find(kModule), std::string::npos) << linear.error();
      continue;
    }
    const OwnedTensor& weight = linear->weight;
    ASSERT_EQ(weight.shape.size(), 2u);
    ASSERT_EQ(static_cast<int64_t>(weight.bytes.size()),
              weight.shape[1] * RowBytes(*FindSupportedType(weight.type), weight.shape[0]));
  }
}

TEST(MalformedLayersTest, Fp8PerTensorAndBlocks) {
  const std::vector<PartSpec> per_tensor = {
      Spec("weight", "F8_E4M3", {4, 32}, Filled(128, 0x38)),
      Spec("weight_scale", "F32", {1}, std::vector<float>{0.5f}),
      Spec("input_scale", "F32", {1}, std::vector<float>{0.25f})};
  ConvertDamaged(
      per_tensor, [](const auto& t) { return ConvertFp8Linear({}, t); }, 1);
  const std::vector<PartSpec> blocks = {
      Spec("weight", "F8_E4M3", {5, 7}, Filled(35, 0x41)),
      Spec("weight_scale_inv", "F32", {3, 3}, std::vector<float>(9, 0.125f))};
  ConvertDamaged(
      blocks,
      [](const auto& t) {
        return ConvertFp8Linear({.weight_block_size = {2, 3}}, t);
      },
      2);
  const std::vector<PartSpec> unquantized = {
      Spec("weight", "BF16", {4, 32}, std::vector<uint16_t>(128, Fp32ToBf16(0.75f)))};
  ConvertDamaged(
      unquantized, [](const auto& t) { return ConvertFp8Linear({.quantize_at_load = true}, t); },
      3);
}

TEST(MalformedLayersTest, CompressedTensorsFormats) {
  CtScheme packed{.weights = {.num_bits = 4,
                              .symmetric = false,
                              .strategy = "group",
                              .group_size = 32,
                              .actorder = "group"}};
  std::vector<int32_t> group_index(64);
  for (int c = 0; c < 64; ++c) group_index[c] = c % 2;
  const std::vector<PartSpec> pack_quantized = {
      Spec("weight_packed", "I32", {12, 8}, std::vector<int32_t>(96, 0x76543210)),
      Spec("weight_scale", "BF16", {12, 2}, std::vector<uint16_t>(24, Fp32ToBf16(0.5f))),
      Spec("weight_zero_point", "I32", {2, 2}, std::vector<int32_t>(4, 0x88888888)),
      Spec("weight_shape", "I64", {2}, std::vector<int64_t>{12, 64}),
      Spec("weight_g_idx", "I32", {64}, group_index)};
  ConvertDamaged(
      pack_quantized,
      [&](const auto& t) { return ConvertCompressedTensorsLinear(packed, "pack-quantized", t); },
      4);
  CtScheme int8{.weights = {.strategy = "channel"},
                .input_activations = CtQuantArgs{.strategy = "tensor"}};
  const std::vector<PartSpec> int_quantized = {
      Spec("weight", "I8", {3, 32}, Filled(96, 0xfd)),
      Spec("weight_scale", "F32", {3, 1}, std::vector<float>(3, 0.01f)),
      Spec("input_scale", "F32", {1}, std::vector<float>{0.02f})};
  ConvertDamaged(
      int_quantized,
      [&](const auto& t) { return ConvertCompressedTensorsLinear(int8, "int-quantized", t); }, 5);
  CtScheme fp8{.weights = {.type = "float", .strategy = "channel"}};
  const std::vector<PartSpec> float_quantized = {
      Spec("weight", "F8_E4M3", {3, 32}, Filled(96, 0xb8)),
      Spec("weight_scale", "BF16", {3, 1}, std::vector<uint16_t>(3, Fp32ToBf16(0.5f)))};
  ConvertDamaged(
      float_quantized,
      [&](const auto& t) { return ConvertCompressedTensorsLinear(fp8, "float-quantized", t); }, 6);
}

TEST(MalformedLayersTest, BitsAndBytes) {
  const std::string state =
      R"({"quant_type": "nf4", "blocksize": 64, "dtype": "bfloat16", "shape": [2, 64],)"
      R"( "nested_blocksize": 256, "nested_dtype": "float32", "nested_offset": 0.03})";
  const std::vector<PartSpec> four_bit = {
      Spec("weight", "U8", {64, 1}, Filled(64, 0x7c)),
      Spec("weight.absmax", "U8", {2}, Filled(2, 0x90)),
      Spec("weight.quant_map", "F32", {16}, std::vector<float>(16, 0.5f)),
      Spec("weight.nested_absmax", "F32", {1}, std::vector<float>{0.1f}),
      Spec("weight.nested_quant_map", "F32", {256}, std::vector<float>(256, 0.25f)),
      Spec("weight.quant_state.bitsandbytes__nf4", "U8", {static_cast<int64_t>(state.size())},
           std::vector<uint8_t>(state.begin(), state.end()))};
  ConvertDamaged(
      four_bit, [](const auto& t) { return ConvertBitsAndBytesLinear({.load_in_4bit = true}, t); },
      7);
  const std::vector<PartSpec> eight_bit = {Spec("weight", "I8", {2, 32}, Filled(64, 0x85)),
                                           Spec("SCB", "F32", {2}, std::vector<float>{1.5f, 2.5f}),
                                           Spec("weight_format", "U8", {}, Filled(1, 0))};
  ConvertDamaged(
      eight_bit, [](const auto& t) { return ConvertBitsAndBytesLinear({.load_in_8bit = true}, t); },
      8);
}

}  // namespace
}  // namespace vllm
