// The converters' fuzz input (fuzz_layer.h): a writer's layer encoded and decoded is the same
// safetensors layer, converted to the same bytes as the writer's own tensors; the decoder's
// bounds hold for any bytes.
#include "model/hf_quant/fuzz/fuzz_layer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "formats/safetensors_file.h"
#include "model/hf_quant/quantized_linear.h"

namespace vllm {
namespace {

// The layer's parts by suffix, viewing `tensors`.
QuantizedLinearTensors PartsOf(const std::vector<SafetensorsTensor>& tensors) {
  QuantizedLinearTensors layer{kFuzzedModule, {}};
  for (const SafetensorsTensor& tensor : tensors) {
    layer.parts[tensor.name.substr(layer.module.size() + 1)] = &tensor;
  }
  return layer;
}

TEST(FuzzedLayerTest, WriterLayersRoundTripAndConvertAlike) {
  std::vector<float> weight(32 * 64);
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = std::sin(static_cast<float>(i)) * 0.1f;
  for (const char* format : {"gptq-act", "awq-gemv", "fp8-block", "w4a16", "ct-fp8", "bnb-fp4"}) {
    SCOPED_TRACE(format);
    auto options = MakeHfQuantWriterOptions(format, 0, 32, false, 1);
    if (!options.ok()) options = MakeHfQuantWriterOptions(format, 0, 0, false, 1);
    ASSERT_TRUE(options.ok()) << options.error();
    auto layer = QuantizeHfLinear(*options, kFuzzedModule, weight.data(), 32, 64);
    ASSERT_TRUE(layer.ok()) << layer.error();
    const nlohmann::json config = {{"quantization_config", HfQuantizationConfigJson(*options)}};
    auto input = EncodeFuzzedLayer(0, config.dump(), layer->tensors);
    ASSERT_TRUE(input.ok()) << input.error();

    const std::optional<FuzzedLayer> decoded = DecodeFuzzedLayer(input->data(), input->size());
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(decoded->requested, "");
    EXPECT_EQ(decoded->config_json, config.dump());
    auto file = SafetensorsFile::Parse(decoded->safetensors.data(), decoded->safetensors.size());
    ASSERT_TRUE(file.ok()) << file.error();
    ASSERT_EQ((*file)->tensors().size(), layer->tensors.size());
    std::vector<SafetensorsTensor> written;
    for (const WrittenTensor& tensor : layer->tensors) {
      const SafetensorsTensor* read = (*file)->FindTensor(tensor.name);
      ASSERT_NE(read, nullptr) << tensor.name;
      EXPECT_EQ(read->dtype, tensor.dtype);
      EXPECT_EQ(read->shape, tensor.shape);
      ASSERT_EQ(read->num_bytes, static_cast<int64_t>(tensor.bytes.size()));
      EXPECT_EQ(std::memcmp(read->data, tensor.bytes.data(), tensor.bytes.size()), 0);
      written.push_back({tensor.name, tensor.type, tensor.shape, tensor.bytes.data(),
                         static_cast<int64_t>(tensor.bytes.size()), tensor.dtype});
    }
    auto quantization = ReadQuantizationConfig("", config, decoded->requested);
    ASSERT_TRUE(quantization.ok()) << quantization.error();
    std::vector<SafetensorsTensor> decoded_tensors = (*file)->tensors();
    auto from_input = ConvertQuantizedLinear(*quantization, PartsOf(decoded_tensors));
    auto from_writer = ConvertQuantizedLinear(*quantization, PartsOf(written));
    ASSERT_TRUE(from_input.ok()) << from_input.error();
    ASSERT_TRUE(from_writer.ok()) << from_writer.error();
    EXPECT_EQ(from_input->weight.bytes, from_writer->weight.bytes);
    EXPECT_EQ(from_input->input_order, from_writer->input_order);
  }
}

TEST(FuzzedLayerTest, DecodingBoundsAnyInput) {
  // Request 5 ("fp8"), an empty config, then "w": F32 (index 0), rank 2, [3, 2], 4 bytes given.
  std::vector<uint8_t> input = {5, '{', '}', 0, 'w', 0, 0, 2, 3, 0, 2, 0, 1, 2, 3, 4};
  std::optional<FuzzedLayer> layer = DecodeFuzzedLayer(input.data(), input.size());
  ASSERT_TRUE(layer.has_value());
  EXPECT_EQ(layer->requested, "fp8");
  EXPECT_EQ(layer->config_json, "{}");
  auto file = SafetensorsFile::Parse(layer->safetensors.data(), layer->safetensors.size());
  ASSERT_TRUE(file.ok()) << file.error();
  ASSERT_EQ((*file)->tensors().size(), 1u);
  const SafetensorsTensor& tensor = (*file)->tensors()[0];
  EXPECT_EQ(tensor.name, std::string(kFuzzedModule) + ".w");
  EXPECT_EQ(tensor.shape, (std::vector<int64_t>{3, 2}));
  ASSERT_EQ(tensor.num_bytes, 24);  // the 4 bytes given, then zeros
  const auto* bytes = static_cast<const uint8_t*>(tensor.data);
  EXPECT_EQ(bytes[3], 4);
  EXPECT_EQ(bytes[4], 0);

  // A record cut short ends the list; a name given twice keeps its first tensor.
  input = {0, 0, 'a', 0, 3, 1, 2, 0, 7, 7, 'a', 0, 3, 0, 9, 'b', 0, 3};
  layer = DecodeFuzzedLayer(input.data(), input.size());
  ASSERT_TRUE(layer.has_value());
  file = SafetensorsFile::Parse(layer->safetensors.data(), layer->safetensors.size());
  ASSERT_TRUE(file.ok()) << file.error();
  ASSERT_EQ((*file)->tensors().size(), 1u);
  EXPECT_EQ((*file)->tensors()[0].shape, std::vector<int64_t>{2});

  // Data beyond kMaxFuzzedLayerBytes: F64 [65535, 65535] is refused, not allocated.
  input = {0, 0, 'x', 0, 10, 2, 0xff, 0xff, 0xff, 0xff};
  EXPECT_FALSE(DecodeFuzzedLayer(input.data(), input.size()).has_value());
  EXPECT_FALSE(DecodeFuzzedLayer(input.data(), 0).has_value());
  const uint8_t no_config_end[] = {0, '{'};
  EXPECT_FALSE(DecodeFuzzedLayer(no_config_end, sizeof(no_config_end)).has_value());
}

}  // namespace
}  // namespace vllm
