#include "lora/lora_test_files.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "formats/gguf_writer.h"
#include "formats/safetensors_writer.h"
#include "kernels/ops.h"

namespace vllm::lora {
namespace {

// The tensor's bytes in its type, row by row (the last dimension is the row).
std::vector<uint8_t> EncodeTensor(const TestTensor& tensor) {
  const int64_t cols = tensor.shape.back();
  const int64_t rows = static_cast<int64_t>(tensor.values.size()) / cols;
  const int64_t row_bytes = RowBytes(*FindSupportedType(tensor.type), cols);
  std::vector<uint8_t> bytes(rows * row_bytes);
  for (int64_t row = 0; row < rows; ++row) {
    kernels::QuantizeRow(tensor.type, tensor.values.data() + row * cols, cols,
                         bytes.data() + row * row_bytes);
  }
  return bytes;
}

}  // namespace

LoraBaseShape TinyBase() {
  LoraBaseShape base;
  base.architecture = "llama";
  base.num_layers = 2;
  base.hidden_size = 32;
  base.num_heads = 4;
  base.num_kv_heads = 2;
  base.head_dim = 8;
  base.q_size = 32;
  base.kv_size = 16;
  base.intermediate_size = 64;
  base.qk_rows_permuted_for_rope = true;
  base.gguf_permutes_qk_rows = true;
  return base;
}

TestTensor MakeTestTensor(std::string name, std::vector<int64_t> shape, int seed) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) {
    values[i] = 0.9f * static_cast<float>(std::sin(0.37 * double(i) + 1.3 * seed));
  }
  return {std::move(name), std::move(shape), std::move(values)};
}

std::string PeftTensorName(int layer, const std::string& module, char a_or_b) {
  return "base_model.model.model.layers." + std::to_string(layer) + "." + module + ".lora_" +
         a_or_b + ".weight";
}

std::string PeftConfig(int64_t r, double alpha, const std::string& target_modules,
                       const std::string& extra) {
  return "{\"peft_type\": \"LORA\", \"r\": " + std::to_string(r) +
         ", \"lora_alpha\": " + std::to_string(alpha) + ", \"target_modules\": " + target_modules +
         (extra.empty() ? "" : ", " + extra) + "}";
}

Status WritePeftAdapter(const std::string& directory, const std::string& config,
                        const std::vector<TestTensor>& tensors) {
  std::filesystem::create_directories(directory);
  std::ofstream(directory + "/adapter_config.json") << config;
  std::vector<std::vector<uint8_t>> bytes;
  bytes.reserve(tensors.size());
  std::vector<SafetensorsTensor> out;
  for (const TestTensor& tensor : tensors) {
    bytes.push_back(EncodeTensor(tensor));
    out.push_back({tensor.name, tensor.type, tensor.shape, bytes.back().data(),
                   static_cast<int64_t>(bytes.back().size())});
  }
  return WriteSafetensors(directory + "/adapter_model.safetensors", out);
}

Status WriteGgufAdapter(const std::string& path, const GgufAdapterHeader& header,
                        const std::vector<TestTensor>& tensors) {
  GgufWriter writer;
  writer.AddMetadata("general.architecture", GgufValue::String(header.architecture));
  writer.AddMetadata("general.type", GgufValue::String(header.type));
  writer.AddMetadata("adapter.type", GgufValue::String(header.adapter_type));
  if (header.alpha) writer.AddMetadata("adapter.lora.alpha", GgufValue::Float32(*header.alpha));
  std::vector<std::vector<uint8_t>> bytes;
  for (const TestTensor& tensor : tensors) {
    writer.AddTensor(tensor.name, {tensor.shape.rbegin(), tensor.shape.rend()}, tensor.type);
    bytes.push_back(EncodeTensor(tensor));
  }
  VLLM_RETURN_IF_ERROR(writer.Begin(path));
  for (size_t i = 0; i < bytes.size(); ++i) {
    VLLM_RETURN_IF_ERROR(writer.WriteTensorData(i, bytes[i].data(), bytes[i].size()));
  }
  return writer.Finish();
}

}  // namespace vllm::lora
