// libFuzzer entry point for the quantized-checkpoint converters: one layer's tensors and its
// config.json (fuzz_layer.h) go through ReadQuantizationConfig and ConvertQuantizedLinear, as the
// loader takes them. Each must give an error or a well-formed layer: a kernel type, ggml shape
// {cols, rows} with every row's bytes (all read back here, so ASan sees any short buffer), and
// an input order that is a permutation of the columns. Anything else aborts.
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <vector>

#include "formats/safetensors_file.h"
#include "kernels/ops.h"
#include "model/hf_quant/fuzz/fuzz_layer.h"
#include "model/hf_quant/quantized_linear.h"

namespace vllm {
namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "converted layer: %s\n", what);
  std::abort();
}

void CheckConverted(const ConvertedLinear& converted) {
  const OwnedTensor& weight = converted.weight;
  if (weight.shape.size() != 2 || weight.shape[0] <= 0 || weight.shape[1] <= 0) {
    Fail("shape is not two positive sizes");
  }
  const GgmlTypeTraits* traits = FindSupportedType(weight.type);
  if (traits == nullptr) Fail("type is not a kernel type");
  const int64_t cols = weight.shape[0], rows = weight.shape[1];
  if (cols % traits->block_size != 0) Fail("rows are not whole blocks");
  const int64_t row_bytes = RowBytes(*traits, cols);
  if (static_cast<int64_t>(weight.bytes.size()) != rows * row_bytes) Fail("bytes != rows");
  std::vector<float> row(cols);
  for (int64_t r = 0; r < rows; ++r) {
    kernels::DequantizeRow(weight.type, weight.bytes.data() + r * row_bytes, cols, row.data());
  }
  const std::vector<int32_t>& order = converted.input_order;
  if (order.empty()) return;
  if (static_cast<int64_t>(order.size()) != cols) Fail("input order is not one per column");
  std::vector<bool> seen(cols, false);
  for (int32_t column : order) {
    if (column < 0 || column >= cols || seen[column]) Fail("input order is no permutation");
    seen[column] = true;
  }
}

}  // namespace
}  // namespace vllm

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vllm;
  const std::optional<FuzzedLayer> layer = DecodeFuzzedLayer(data, size);
  if (!layer) return 0;
  const nlohmann::json config = nlohmann::json::parse(layer->config_json, nullptr,
                                                      /*allow_exceptions=*/false);
  if (config.is_discarded()) return 0;
  // No quantize_config.json beside it: the directory does not exist.
  auto quantization =
      ReadQuantizationConfig("/nonexistent/hf_quant_fuzz", config, layer->requested);
  if (!quantization) return 0;
  auto file = SafetensorsFile::Parse(layer->safetensors.data(), layer->safetensors.size());
  if (!file) {
    std::fprintf(stderr, "the layer's own safetensors do not parse: %s\n", file.error().c_str());
    std::abort();
  }
  QuantizedLinearTensors tensors{kFuzzedModule, {}};
  const size_t prefix = tensors.module.size() + 1;
  for (const SafetensorsTensor& tensor : (*file)->tensors()) {
    tensors.parts[tensor.name.substr(prefix)] = &tensor;
  }
  auto converted = ConvertQuantizedLinear(*quantization, tensors);
  if (converted.ok()) {
    CheckConverted(*converted);
  } else if (converted.error().empty()) {
    Fail("an error without a message");
  }
  return 0;
}
