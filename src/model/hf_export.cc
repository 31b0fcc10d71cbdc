#include "model/hf_export.h"

#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/ggml_type.h"
#include "formats/safetensors_writer.h"
#include "kernels/ops.h"
#include "model/architecture.h"
#include "model/hf_checkpoint.h"
#include "model/hf_quant_writer.h"
#include "model/model_config.h"

namespace vllm {
namespace {

namespace fs = std::filesystem;

// GGUF Q/K rows interleave each head's rotary pairs (2j, 2j + 1); Hugging Face keeps them
// (j, j + head_dim / 2). Returns the rows of `tensor` ([num_heads * head_dim] rows) reordered.
std::vector<uint8_t> UninterleaveHeads(const GgufTensor& tensor, int64_t head_dim) {
  const int64_t rows = tensor.shape[1];
  const int64_t row_bytes = tensor.num_bytes / rows;
  std::vector<uint8_t> out(tensor.num_bytes);
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t head = row / head_dim, within = row % head_dim;
    const int64_t hf_within = within / 2 + (within % 2) * (head_dim / 2);
    std::memcpy(out.data() + (head * head_dim + hf_within) * row_bytes,
                tensor.data + row * row_bytes, row_bytes);
  }
  return out;
}

// Gemma's norm weights as Hugging Face stores them: the GGUF values less one, in f32.
std::vector<uint8_t> NormWeightsLessOne(const GgufTensor& tensor) {
  const int64_t size = tensor.shape[0];
  std::vector<float> values(size);
  kernels::DequantizeRow(tensor.type, tensor.data, size, values.data());
  for (float& value : values) value -= 1.0f;
  std::vector<uint8_t> bytes(size * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

const char* TorchDtype(GgmlType type) {
  return type == GgmlType::kBF16 ? "bfloat16" : type == GgmlType::kF16 ? "float16" : "float32";
}

// An embedder's sentence-transformers files (its GGUF pooling_type, which config.json does not
// hold, for BERT encoders as for decoders): modules.json with Transformer → Pooling → the Dense
// modules dense_<k>.weight (k_Dense/, EmbeddingGemma) → Normalize, and each module's config.json.
Status WriteSentenceTransformersFiles(const GgufFile& gguf, const ModelConfig& config,
                                      const fs::path& output_dir) {
  const PoolingType type = config.pooler.pooling_type;
  if (type == PoolingType::kUnset || type == PoolingType::kAll ||
      gguf.FindTensor("cls.output.weight") != nullptr) {
    return Status::Ok();
  }
  nlohmann::json modules = nlohmann::json::array();
  auto add_module = [&](const std::string& path, const std::string& kind) -> Status {
    const int64_t index = static_cast<int64_t>(modules.size());
    modules.push_back({{"idx", index},
                       {"name", std::to_string(index)},
                       {"path", path},
                       {"type", "sentence_transformers.models." + kind}});
    std::error_code error;
    if (!path.empty()) fs::create_directories(output_dir / path, error);
    if (error) return Error{"cannot create " + (output_dir / path).string()};
    return Status::Ok();
  };
  VLLM_RETURN_IF_ERROR(add_module("", "Transformer"));
  VLLM_RETURN_IF_ERROR(add_module("1_Pooling", "Pooling"));
  const nlohmann::json pooling = {{"word_embedding_dimension", config.hidden_size},
                                  {"pooling_mode_cls_token", type == PoolingType::kCls},
                                  {"pooling_mode_mean_tokens", type == PoolingType::kMean},
                                  {"pooling_mode_lasttoken", type == PoolingType::kLast}};
  std::ofstream(output_dir / "1_Pooling" / "config.json") << pooling.dump(2) << "\n";
  for (int64_t k = 2; k <= 9; ++k) {
    const GgufTensor* dense = gguf.FindTensor("dense_" + std::to_string(k) + ".weight");
    if (dense == nullptr) continue;
    if (static_cast<int64_t>(modules.size()) != k) {
      return Error{"dense_" + std::to_string(k) + ".weight does not follow the modules before it"};
    }
    const std::string path = std::to_string(k) + "_Dense";
    VLLM_RETURN_IF_ERROR(add_module(path, "Dense"));
    const nlohmann::json dense_config = {
        {"in_features", dense->shape[0]},
        {"out_features", dense->shape[1]},
        {"bias", false},
        {"activation_function", "torch.nn.modules.linear.Identity"}};
    std::ofstream(output_dir / path / "config.json") << dense_config.dump(2) << "\n";
    VLLM_RETURN_IF_ERROR(WriteSafetensors((output_dir / path / "model.safetensors").string(),
                                          {{"linear.weight",
                                            dense->type,
                                            {dense->shape[1], dense->shape[0]},
                                            dense->data,
                                            dense->num_bytes}},
                                          {{"format", "pt"}}));
  }
  VLLM_RETURN_IF_ERROR(add_module(std::to_string(modules.size()) + "_Normalize", "Normalize"));
  std::ofstream(output_dir / "modules.json") << modules.dump(2) << "\n";
  return Status::Ok();
}

// The quantized layers' tensors and, for the dequantized twin, their values, kept alive until
// the files are written.
struct QuantizedStorage {
  std::deque<WrittenTensor> parts;
  std::deque<std::vector<float>> dequantized;
};

// Replaces every decoder linear weight of `tensors` (IsQuantizedHfLinear) with its quantized
// tensors; `dequantized` (when not null) gets the same list with those weights as F32 values.
Status QuantizeLinears(const HfQuantWriterOptions& options, std::vector<SafetensorsTensor>* tensors,
                       std::vector<SafetensorsTensor>* dequantized, QuantizedStorage* storage) {
  std::vector<SafetensorsTensor> quantized;
  int64_t num_quantized = 0;
  for (SafetensorsTensor& tensor : *tensors) {
    if (!IsQuantizedHfLinear(tensor.name, tensor.shape.size())) {
      quantized.push_back(tensor);
      if (dequantized != nullptr) dequantized->push_back(std::move(tensor));
      continue;
    }
    if (!IsSafetensorsFloatType(tensor.type)) {
      return Error{"tensor '" + tensor.name + "' is not F32, F16 or BF16"};
    }
    const int64_t rows = tensor.shape[0], cols = tensor.shape[1];
    std::vector<float> weight(rows * cols);  // [rows (out), cols (in)]
    kernels::DequantizeRow(tensor.type, tensor.data, rows * cols, weight.data());
    const std::string module = tensor.name.substr(0, tensor.name.size() - 7);  // less ".weight"
    auto layer = QuantizeHfLinear(options, module, weight.data(), rows, cols);
    if (!layer) return Error{layer.error()};
    ++num_quantized;
    for (WrittenTensor& part : layer->tensors) {
      const WrittenTensor& kept = storage->parts.emplace_back(std::move(part));
      quantized.push_back({kept.name, kept.type, kept.shape, kept.bytes.data(),
                           static_cast<int64_t>(kept.bytes.size()), kept.dtype});
    }
    if (dequantized != nullptr) {
      const std::vector<float>& values =
          storage->dequantized.emplace_back(std::move(layer->dequantized));
      dequantized->push_back({tensor.name, GgmlType::kF32, tensor.shape, values.data(),
                              static_cast<int64_t>(values.size() * sizeof(float))});
    }
  }
  if (num_quantized == 0) return Error{"the model has no decoder linear layers to quantize"};
  *tensors = std::move(quantized);
  return Status::Ok();
}

// A model directory from `gguf`; with `quantization`, its decoder linear weights quantized (and,
// with `dequantized_dir` not empty, that directory written with their dequantized values).
Status WriteHfCheckpoint(const GgufFile& gguf, const std::string& output_dir,
                         const std::string& tokenizer_dir, const HfQuantWriterOptions* quantization,
                         const std::string& dequantized_dir) {
  auto config = ModelConfigFromGguf(gguf);
  if (!config) return Error{config.error()};
  const Architecture& architecture = *FindArchitecture(config->architecture);
  if (architecture.hf_names.empty()) {
    return Error{"no Hugging Face architecture for '" + config->architecture + "'"};
  }
  // Only llama.cpp's "llama" files interleave the rotary pairs of Q and K.
  const bool interleaved = config->rope_style == RopeStyle::kInterleaved;
  std::error_code error;

  std::vector<std::vector<uint8_t>> converted;  // keeps reordered or offset bytes alive
  converted.reserve(gguf.tensors().size());
  std::vector<SafetensorsTensor> tensors;
  GgmlType dtype = GgmlType::kF32;
  std::vector<OwnedTensor> converted_tensors;  // the architecture's own conversions
  for (const GgufTensor& tensor : gguf.tensors()) {
    // LongRoPE factors go into config.json (the architecture's write_hf), Dense modules into
    // their sentence-transformers directories.
    if (tensor.name.starts_with("rope_factors_") || tensor.name.starts_with("dense_")) continue;
    if (architecture.export_hf_tensor != nullptr) {
      auto handled = architecture.export_hf_tensor(gguf, tensor, &converted_tensors);
      if (!handled) return Error{"tensor '" + tensor.name + "': " + handled.error()};
      if (*handled) continue;
    }
    if (!IsSafetensorsFloatType(tensor.type)) {
      return Error{"tensor '" + tensor.name + "' is not F32, F16 or BF16"};
    }
    // A 3-D expert tensor "<stem>_exps.weight" becomes one tensor per expert.
    const bool stacked = tensor.shape.size() == 3 && tensor.name.ends_with("_exps.weight");
    const int64_t num_parts = stacked ? tensor.shape[2] : 1;
    const int64_t part_bytes = tensor.num_bytes / num_parts;
    for (int64_t part = 0; part < num_parts; ++part) {
      const std::string gguf_name = stacked ? tensor.name.substr(0, tensor.name.size() - 12) + "." +
                                                  std::to_string(part) + ".weight"
                                            : tensor.name;
      const std::string name = TranslateTensorName(architecture.hf_tensors, gguf_name, false);
      if (name.empty()) return Error{"tensor '" + gguf_name + "' has no Hugging Face name"};
      std::vector<int64_t> shape(tensor.shape.rbegin() + (stacked ? 1 : 0), tensor.shape.rend());
      SafetensorsTensor out{name, tensor.type, shape, tensor.data + part * part_bytes, part_bytes};
      if (interleaved &&
          (tensor.name.ends_with("attn_q.weight") || tensor.name.ends_with("attn_k.weight"))) {
        converted.push_back(UninterleaveHeads(tensor, config->head_dim));
        out.data = converted.back().data();
      }
      if (architecture.hf_norms_offset_by_one && tensor.name.ends_with("norm.weight")) {
        converted.push_back(NormWeightsLessOne(tensor));
        out.type = GgmlType::kF32;
        out.data = converted.back().data();
        out.num_bytes = static_cast<int64_t>(converted.back().size());
      }
      if (shape.size() == 2) dtype = tensor.type;
      tensors.push_back(std::move(out));
    }
  }
  for (const OwnedTensor& tensor : converted_tensors) {
    tensors.push_back({tensor.name, tensor.type, tensor.shape, tensor.bytes.data(),
                       static_cast<int64_t>(tensor.bytes.size())});
  }

  const std::string& model_type =
      architecture.hf_model_type.empty() ? config->architecture : architecture.hf_model_type;
  nlohmann::json hf_config = {{"architectures", {architecture.hf_names.front()}},
                              {"model_type", model_type},
                              {"hidden_size", config->hidden_size},
                              {"intermediate_size", config->intermediate_size},
                              {"num_attention_heads", config->num_heads},
                              {"num_hidden_layers", config->num_layers},
                              {"num_key_value_heads", config->num_kv_heads},
                              {"head_dim", config->head_dim},
                              {"max_position_embeddings", config->max_position_embeddings},
                              {"rms_norm_eps", config->rms_norm_eps},
                              {"rope_theta", config->rope_theta},
                              {"vocab_size", config->vocab_size},
                              {"tie_word_embeddings", gguf.FindTensor("output.weight") == nullptr},
                              {"torch_dtype", TorchDtype(dtype)}};
  if (config->rope_dim != config->head_dim) {
    hf_config["partial_rotary_factor"] =
        static_cast<double>(config->rope_dim) / static_cast<double>(config->head_dim);
  }
  if (config->rope_position_scale != 1.0f) {
    hf_config["rope_scaling"] = {{"rope_type", "linear"},
                                 {"factor", 1.0 / config->rope_position_scale}};
  }
  if (config->rope_yarn_factor > 0) {
    hf_config["rope_scaling"] = {
        {"rope_type", "yarn"},
        {"factor", config->rope_yarn_factor},
        {"original_max_position_embeddings", config->rope_original_context_length},
        {"beta_fast", config->rope_yarn_beta_fast},
        {"beta_slow", config->rope_yarn_beta_slow},
        {"truncate", config->rope_yarn_truncate}};
  }
  if (config->sliding_window > 0) hf_config["sliding_window"] = config->sliding_window;
  if (architecture.write_hf != nullptr) {
    VLLM_RETURN_IF_ERROR(architecture.write_hf(gguf, *config, &hf_config));
  }
  auto write_directory = [&](const std::string& directory,
                             const std::vector<SafetensorsTensor>& directory_tensors,
                             const nlohmann::json& directory_config) -> Status {
    fs::create_directories(directory, error);
    if (error) return Error{"cannot create " + directory + ": " + error.message()};
    VLLM_RETURN_IF_ERROR(WriteSafetensors((fs::path(directory) / "model.safetensors").string(),
                                          directory_tensors, {{"format", "pt"}}));
    std::ofstream(fs::path(directory) / "config.json") << directory_config.dump(2) << "\n";
    VLLM_RETURN_IF_ERROR(WriteSentenceTransformersFiles(gguf, *config, directory));
    for (const char* file :
         {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"}) {
      const fs::path source = fs::path(tokenizer_dir) / file;
      if (!fs::exists(source, error)) continue;
      fs::copy_file(source, fs::path(directory) / file, fs::copy_options::overwrite_existing,
                    error);
      if (error) return Error{"cannot copy " + source.string() + ": " + error.message()};
    }
    return Status::Ok();
  };
  if (quantization == nullptr) return write_directory(output_dir, tensors, hf_config);
  HfQuantWriterOptions options = *quantization;
  options.torch_dtype = TorchDtype(dtype);
  std::vector<SafetensorsTensor> dequantized;
  QuantizedStorage storage;
  VLLM_RETURN_IF_ERROR(QuantizeLinears(options, &tensors,
                                       dequantized_dir.empty() ? nullptr : &dequantized, &storage));
  if (!dequantized_dir.empty()) {
    VLLM_RETURN_IF_ERROR(write_directory(dequantized_dir, dequantized, hf_config));
  }
  hf_config["quantization_config"] = HfQuantizationConfigJson(options);
  return write_directory(output_dir, tensors, hf_config);
}

}  // namespace

Status WriteHfCheckpointFromGguf(const GgufFile& gguf, const std::string& output_dir,
                                 const std::string& tokenizer_dir) {
  return WriteHfCheckpoint(gguf, output_dir, tokenizer_dir, nullptr, "");
}

Status WriteQuantizedHfCheckpointFromGguf(const GgufFile& gguf, const std::string& output_dir,
                                          const std::string& tokenizer_dir,
                                          const HfQuantWriterOptions& quantization,
                                          const std::string& dequantized_dir) {
  return WriteHfCheckpoint(gguf, output_dir, tokenizer_dir, &quantization, dequantized_dir);
}

}  // namespace vllm
