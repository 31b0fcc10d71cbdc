#include "model/model_loader.h"

#include <filesystem>

namespace vllm {

Expected<LoadedModel> LoadModelFromPath(const std::string& path, const ModelLoadOptions& options) {
  LoadedModel loaded;
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    auto checkpoint = OpenHfCheckpoint(path);
    if (!checkpoint) return Error{path + ": " + checkpoint.error()};
    loaded.checkpoint = std::move(*checkpoint);
    auto model = LoadModel(*loaded.checkpoint->source, loaded.checkpoint->config, options);
    if (!model) return Error{path + ": " + model.error()};
    loaded.model = std::move(*model);
    return loaded;
  }
  auto file = GgufFile::Open(path);
  if (!file) return Error{file.error()};
  loaded.gguf = std::move(*file);
  auto model = LoadModelFromGguf(*loaded.gguf, options);
  if (!model) return Error{path + ": " + model.error()};
  loaded.model = std::move(*model);
  return loaded;
}

Expected<std::optional<GgmlType>> LinearTypeFor(const std::string& dtype,
                                                const std::string& quantization) {
  if (!quantization.empty()) {
    for (GgmlType type : {GgmlType::kQ8_0, GgmlType::kQ6_K, GgmlType::kQ4_K}) {
      if (ParseGgmlType(quantization) == type) return std::optional<GgmlType>(type);
    }
    return Error{"unsupported --quantization '" + quantization + "' (supported: q8_0, q6_k, q4_k)"};
  }
  if (dtype == "auto") return std::optional<GgmlType>();
  if (dtype == "float32" || dtype == "float") return std::optional<GgmlType>(GgmlType::kF32);
  if (dtype == "bfloat16") return std::optional<GgmlType>(GgmlType::kBF16);
  if (dtype == "float16" || dtype == "half") return std::optional<GgmlType>(GgmlType::kF16);
  return Error{"unsupported --dtype '" + dtype + "' (supported: auto, float32, bfloat16, float16)"};
}

}  // namespace vllm
