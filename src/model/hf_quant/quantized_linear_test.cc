// FindQuantizedLinears groups a checkpoint's tensors by quantized module as each method stores
// them: a module's known parts are consumed, its other tensors (a bias) and ignored modules stay
// normal tensors.
#include "model/hf_quant/quantized_linear.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <random>

#include "common/half.h"
#include "common/temp_test_dir.h"
#include "formats/safetensors_writer.h"
#include "model/hf_quant/test_parts.h"
#include "model/hf_quant_writer.h"

namespace vllm {
namespace {

// A model directory holding one safetensors file of zero-filled tensors (name, dtype, shape).
class CheckpointOfShapes {
 public:
  struct Entry {
    std::string name;
    std::string dtype;
    std::vector<int64_t> shape;
  };
  CheckpointOfShapes(const std::string& test_name, const std::vector<Entry>& entries)
      : dir_(test_name) {
    std::vector<SafetensorsTensor> tensors;
    for (const Entry& entry : entries) {
      const GgmlType type = *SafetensorsDtypeType(entry.dtype);
      int64_t count = 1;
      for (int64_t size : entry.shape) count *= size;
      std::vector<uint8_t>& bytes = bytes_.emplace_back(count * SafetensorsElementBytes(type));
      tensors.push_back({entry.name, type, entry.shape, bytes.data(),
                         static_cast<int64_t>(bytes.size()), entry.dtype});
    }
    EXPECT_TRUE(WriteSafetensors(dir_.File("model.safetensors"), tensors).ok());
    auto model = SafetensorsModel::OpenDirectory(dir_.File(""));
    EXPECT_TRUE(model.ok()) << model.error();
    model_ = std::move(*model);
  }
  const SafetensorsModel& model() const { return *model_; }

 private:
  TempTestDir dir_;
  std::deque<std::vector<uint8_t>> bytes_;
  std::unique_ptr<SafetensorsModel> model_;
};

// "module: suffix suffix ..." per found linear, in order.
std::vector<std::string> Describe(const std::vector<QuantizedLinearTensors>& linears) {
  std::vector<std::string> lines;
  for (const QuantizedLinearTensors& linear : linears) {
    std::string line = linear.module + ":";
    for (const auto& [suffix, tensor] : linear.parts) {
      EXPECT_EQ(tensor->name, linear.module + "." + suffix);
      line += " " + suffix;
    }
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> Find(const CheckpointOfShapes& checkpoint,
                              const QuantizationConfig& config) {
  auto linears = FindQuantizedLinears(checkpoint.model(), config);
  EXPECT_TRUE(linears.ok()) << linears.error();
  return linears.ok() ? Describe(*linears) : std::vector<std::string>{};
}

TEST(FindQuantizedLinearsTest, GptqAndAwqModulesAreTheirQweights) {
  const CheckpointOfShapes checkpoint("find_gptq",
                                      {{"model.embed_tokens.weight", "BF16", {32, 64}},
                                       {"model.layers.0.self_attn.q_proj.qweight", "I32", {8, 64}},
                                       {"model.layers.0.self_attn.q_proj.qzeros", "I32", {1, 8}},
                                       {"model.layers.0.self_attn.q_proj.scales", "F16", {1, 64}},
                                       {"model.layers.0.self_attn.q_proj.g_idx", "I32", {64}},
                                       {"model.layers.0.self_attn.q_proj.bias", "F16", {64}},
                                       {"model.layers.0.mlp.down_proj.qweight", "I32", {8, 64}},
                                       {"model.layers.0.mlp.down_proj.qzeros", "I32", {1, 8}},
                                       {"model.layers.0.mlp.down_proj.scales", "F16", {1, 64}},
                                       {"model.layers.0.input_layernorm.weight", "BF16", {64}},
                                       {"lm_head.weight", "BF16", {32, 64}}});
  QuantizationConfig config{.method = QuantMethod::kGptq};
  EXPECT_EQ(
      Find(checkpoint, config),
      (std::vector<std::string>{"model.layers.0.self_attn.q_proj: g_idx qweight qzeros scales",
                                "model.layers.0.mlp.down_proj: qweight qzeros scales"}));
  config.method = QuantMethod::kAwq;
  config.ignore = {"down_proj"};
  EXPECT_EQ(
      Find(checkpoint, config),
      (std::vector<std::string>{"model.layers.0.self_attn.q_proj: g_idx qweight qzeros scales"}));
  config.method = QuantMethod::kNone;
  EXPECT_TRUE(Find(checkpoint, config).empty());
}

TEST(FindQuantizedLinearsTest, Fp8WeightsAreThoseOfTheirDtypeOrEveryProjectionAtLoad) {
  const CheckpointOfShapes checkpoint(
      "find_fp8", {{"model.embed_tokens.weight", "BF16", {32, 64}},
                   {"model.layers.0.self_attn.q_proj.weight", "F8_E4M3", {64, 64}},
                   {"model.layers.0.self_attn.q_proj.weight_scale_inv", "F32", {1, 1}},
                   {"model.layers.0.self_attn.q_proj.input_scale", "F32", {}},
                   {"model.layers.0.mlp.experts.0.w1.weight", "BF16", {64, 64}},
                   {"model.layers.0.mlp.gate.weight", "BF16", {4, 64}},
                   {"model.norm.weight", "BF16", {64}},
                   {"lm_head.weight", "BF16", {32, 64}}});
  QuantizationConfig config{.method = QuantMethod::kFp8};
  EXPECT_EQ(Find(checkpoint, config),
            (std::vector<std::string>{
                "model.layers.0.self_attn.q_proj: input_scale weight weight_scale_inv"}));
  config.fp8.quantize_at_load = true;
  EXPECT_EQ(Find(checkpoint, config),
            (std::vector<std::string>{
                "model.layers.0.self_attn.q_proj: input_scale weight weight_scale_inv",
                "model.layers.0.mlp.experts.0.w1: weight"}));
}

TEST(FindQuantizedLinearsTest, CompressedTensorsModulesHavePackedOrScaledWeights) {
  const CheckpointOfShapes checkpoint(
      "find_ct", {{"model.layers.0.self_attn.o_proj.weight_packed", "I32", {64, 8}},
                  {"model.layers.0.self_attn.o_proj.weight_scale", "BF16", {64, 1}},
                  {"model.layers.0.self_attn.o_proj.weight_shape", "I64", {2}},
                  {"model.layers.0.mlp.up_proj.weight", "I8", {64, 64}},
                  {"model.layers.0.mlp.up_proj.weight_scale", "BF16", {64, 1}},
                  {"model.layers.0.mlp.up_proj.input_scale", "BF16", {1}},
                  {"model.layers.0.mlp.up_proj.output_scale", "BF16", {1}},
                  {"model.layers.0.mlp.down_proj.weight", "BF16", {64, 64}},
                  {"lm_head.weight", "BF16", {32, 64}}});
  EXPECT_EQ(Find(checkpoint, {.method = QuantMethod::kCompressedTensors}),
            (std::vector<std::string>{
                "model.layers.0.self_attn.o_proj: weight_packed weight_scale weight_shape",
                "model.layers.0.mlp.up_proj: input_scale output_scale weight weight_scale"}));
}

TEST(FindQuantizedLinearsTest, BitsAndBytesModulesKeepTheirDottedQuantState) {
  const CheckpointOfShapes checkpoint(
      "find_bnb", {{"model.layers.0.mlp.up_proj.weight", "U8", {2048, 1}},
                   {"model.layers.0.mlp.up_proj.weight.absmax", "U8", {64}},
                   {"model.layers.0.mlp.up_proj.weight.quant_map", "F32", {16}},
                   {"model.layers.0.mlp.up_proj.weight.quant_state.bitsandbytes__nf4", "U8", {9}},
                   {"model.layers.0.mlp.down_proj.weight", "I8", {64, 64}},
                   {"model.layers.0.mlp.down_proj.SCB", "F32", {64}},
                   {"model.layers.0.mlp.down_proj.weight_format", "U8", {1}},
                   {"model.layers.0.mlp.gate_proj.weight", "BF16", {64, 64}}});
  EXPECT_EQ(
      Find(checkpoint, {.method = QuantMethod::kBitsAndBytes}),
      (std::vector<std::string>{"model.layers.0.mlp.up_proj: weight weight.absmax weight.quant_map "
                                "weight.quant_state.bitsandbytes__nf4",
                                "model.layers.0.mlp.down_proj: SCB weight weight_format"}));
}

TEST(ConvertQuantizedLinearTest, CompressedTensorsModuleWithoutASchemeIsAnError) {
  const QuantizationConfig config{.method = QuantMethod::kCompressedTensors};
  const QuantizedLinearTensors tensors{.module = "model.layers.0.mlp.up_proj"};
  auto converted = ConvertQuantizedLinear(config, tensors);
  ASSERT_FALSE(converted.ok());
  EXPECT_NE(converted.error().find("'model.layers.0.mlp.up_proj'"), std::string::npos)
      << converted.error();
  EXPECT_NE(converted.error().find("config_groups"), std::string::npos) << converted.error();
}

// Random GPTQ and AWQ layers around valid shapes, some parts damaged (a dimension off, bytes
// truncated, a part missing, g_idx out of range): each conversion is a weight of the right size or
// an error naming the layer's tensor or the config field, never a crash.
TEST(ConvertQuantizedLinearTest, DamagedGptqAndAwqLayersAreErrorsNotCrashes) {
  std::mt19937 rng(42);
  const auto pick = [&](std::initializer_list<int64_t> values) {
    return *(values.begin() + rng() % values.size());
  };
  int converted_count = 0, error_count = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    const bool awq = rng() % 2 == 0;
    const bool gemv = awq && rng() % 3 == 0;
    const int bits = awq ? 4 : static_cast<int>(pick({2, 3, 4, 8, 8, 5}));
    const int64_t group_size = pick({-1, 32, 64, 128, 48});
    QuantizationConfig config{.method = awq ? QuantMethod::kAwq : QuantMethod::kGptq};
    config.gptq = {.bits = bits, .group_size = group_size, .zeros_minus_one = rng() % 2 == 0};
    config.awq = {.bits = bits, .group_size = group_size, .version = gemv ? "gemv" : "gemm"};
    const int64_t in = 32 * (1 + rng() % 8), out = 32 * (1 + rng() % 3);
    const int64_t num_groups = group_size == -1 ? 1 : std::max<int64_t>(1, in / group_size);
    const int64_t multiple = group_size == 32 ? 4 : group_size == 64 ? 2 : 1;
    const int64_t zeros_width = ((num_groups + 7) / 8 + multiple - 1) / multiple * multiple;
    std::map<std::string, std::vector<int64_t>> shapes;
    if (!awq) {
      shapes = {{"qweight", {in * bits / 32, out}},
                {"qzeros", {num_groups, out * bits / 32}},
                {"scales", {num_groups, out}},
                {"g_idx", {in}}};
    } else if (gemv) {
      shapes = {{"qweight", {out, in / 8}},
                {"qzeros", {out, zeros_width}},
                {"scales", {out, zeros_width * 8}}};
    } else {
      shapes = {{"qweight", {in, out / 8}},
                {"qzeros", {num_groups, out / 8}},
                {"scales", {num_groups, out}}};
    }
    test::LayerParts parts("model.layers.0.mlp.up_proj");
    for (auto& [suffix, shape] : shapes) {
      const uint32_t damage = rng() % 16;
      if (damage == 0) continue;  // missing
      if (damage == 1) shape[rng() % shape.size()] += pick({-8, -1, 1, 8});
      if (std::any_of(shape.begin(), shape.end(), [](int64_t size) { return size < 0; })) continue;
      int64_t count = 1;
      for (int64_t size : shape) count *= size;
      const int64_t truncated_bytes = damage == 2 ? count : -1;  // a quarter of the I32 / F16 bytes
      if (suffix == "scales") {
        std::vector<uint16_t> values(count);
        for (uint16_t& value : values) value = Fp32ToFp16(0.001f * (1 + rng() % 100));
        parts.Add(suffix, "F16", shape, values, truncated_bytes);
      } else if (suffix == "g_idx") {
        std::vector<int32_t> values(count);
        for (int64_t i = 0; i < count; ++i) {
          values[i] = damage == 3 ? static_cast<int32_t>(rng() % (num_groups + 2)) - 1
                                  : static_cast<int32_t>(i * num_groups / std::max<int64_t>(1, in));
        }
        parts.Add(suffix, "I32", shape, values, truncated_bytes);
      } else {
        std::vector<uint32_t> values(count);
        for (uint32_t& value : values) value = rng();
        parts.Add(suffix, "I32", shape, values, truncated_bytes);
      }
    }
    auto result = ConvertQuantizedLinear(config, parts.layer());
    if (result.ok()) {
      ++converted_count;
      const OwnedTensor& weight = result->weight;
      ASSERT_EQ(weight.shape.size(), 2u);
      EXPECT_EQ(static_cast<int64_t>(weight.bytes.size()),
                weight.shape[1] * RowBytes(*FindSupportedType(weight.type), weight.shape[0]));
      EXPECT_TRUE(result->input_order.empty() ||
                  static_cast<int64_t>(result->input_order.size()) == weight.shape[0]);
    } else {
      ++error_count;
      EXPECT_TRUE(result.error().find("model.layers.0.mlp.up_proj.") != std::string::npos ||
                  result.error().find("quantization_config.") != std::string::npos)
          << result.error();
    }
  }
  // Both outcomes were exercised.
  EXPECT_GT(converted_count, 100);
  EXPECT_GT(error_count, 100);
}

// A safetensors tensor is aligned only as far as the tensors before it leave it (after
// bitsandbytes' odd-length quant_state an F32 or F16 tensor starts at an odd offset): every part
// read from an odd address converts to the same layer. (hf_quant_fuzzer found the F16 scales read
// with a misaligned typed load, which the sanitizer build's alignment check reports.)
TEST(ConvertQuantizedLinearTest, PartsAtOddAddressesConvertAlike) {
  std::vector<float> weight(32 * 64);
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = std::cos(static_cast<float>(i)) * 0.05f;
  for (const char* format : {"awq-gemv", "gptq", "w4a16", "ct-fp8", "bnb-nf4", "bnb-int8"}) {
    SCOPED_TRACE(format);
    auto options = MakeHfQuantWriterOptions(format, 0, 0, false, 1);
    ASSERT_TRUE(options.ok()) << options.error();
    options->group_size = 32;
    const std::string module = "model.layers.0.mlp.up_proj";
    auto layer = QuantizeHfLinear(*options, module, weight.data(), 32, 64);
    ASSERT_TRUE(layer.ok()) << layer.error();
    auto config = ReadQuantizationConfig(
        "", {{"quantization_config", HfQuantizationConfigJson(*options)}}, "");
    ASSERT_TRUE(config.ok()) << config.error();
    std::deque<std::vector<uint8_t>> shifted;  // each part's bytes one past an aligned start
    std::deque<SafetensorsTensor> aligned_views, odd_views;
    QuantizedLinearTensors aligned{module, {}}, odd{module, {}};
    for (const WrittenTensor& part : layer->tensors) {
      std::vector<uint8_t>& bytes = shifted.emplace_back(part.bytes.size() + 1);
      std::copy(part.bytes.begin(), part.bytes.end(), bytes.begin() + 1);
      const auto num_bytes = static_cast<int64_t>(part.bytes.size());
      aligned_views.push_back(
          {part.name, part.type, part.shape, part.bytes.data(), num_bytes, part.dtype});
      odd_views.push_back(
          {part.name, part.type, part.shape, bytes.data() + 1, num_bytes, part.dtype});
      const std::string suffix = part.name.substr(module.size() + 1);
      aligned.parts[suffix] = &aligned_views.back();
      odd.parts[suffix] = &odd_views.back();
    }
    auto from_aligned = ConvertQuantizedLinear(*config, aligned);
    auto from_odd = ConvertQuantizedLinear(*config, odd);
    ASSERT_TRUE(from_aligned.ok()) << from_aligned.error();
    ASSERT_TRUE(from_odd.ok()) << from_odd.error();
    EXPECT_EQ(from_odd->weight.bytes, from_aligned->weight.bytes);
  }
}

}  // namespace
}  // namespace vllm
