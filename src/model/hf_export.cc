#include "model/hf_export.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/ggml_type.h"
#include "formats/safetensors_writer.h"
#include "model/hf_checkpoint.h"
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

const char* TorchDtype(GgmlType type) {
  return type == GgmlType::kBF16 ? "bfloat16" : type == GgmlType::kF16 ? "float16" : "float32";
}

}  // namespace

Status WriteHfCheckpointFromGguf(const GgufFile& gguf, const std::string& output_dir,
                                 const std::string& tokenizer_dir) {
  auto config = ModelConfigFromGguf(gguf);
  if (!config) return Error{config.error()};
  const std::string architecture = HfArchitectureName(config->architecture);
  if (architecture.empty()) {
    return Error{"no Hugging Face architecture for '" + config->architecture + "'"};
  }
  // Only llama.cpp's "llama" files interleave the rotary pairs of Q and K.
  const bool interleaved = config->rope_style == RopeStyle::kInterleaved;
  std::error_code error;
  fs::create_directories(output_dir, error);
  if (error) return Error{"cannot create " + output_dir + ": " + error.message()};

  std::vector<std::vector<uint8_t>> reordered;  // keeps reordered Q/K bytes alive
  reordered.reserve(2 * config->num_layers);
  std::vector<SafetensorsTensor> tensors;
  GgmlType dtype = GgmlType::kF32;
  for (const GgufTensor& tensor : gguf.tensors()) {
    const std::string name = HfTensorName(tensor.name);
    if (name.empty()) return Error{"tensor '" + tensor.name + "' has no Hugging Face name"};
    if (!SafetensorsDtypeName(tensor.type)) {
      return Error{"tensor '" + tensor.name + "' is not F32, F16 or BF16"};
    }
    SafetensorsTensor out{name,
                          tensor.type,
                          {tensor.shape.rbegin(), tensor.shape.rend()},
                          tensor.data,
                          tensor.num_bytes};
    if (interleaved &&
        (tensor.name.ends_with("attn_q.weight") || tensor.name.ends_with("attn_k.weight"))) {
      reordered.push_back(UninterleaveHeads(tensor, config->head_dim));
      out.data = reordered.back().data();
    }
    if (tensor.shape.size() == 2) dtype = tensor.type;
    tensors.push_back(std::move(out));
  }
  VLLM_RETURN_IF_ERROR(WriteSafetensors((fs::path(output_dir) / "model.safetensors").string(),
                                        tensors, {{"format", "pt"}}));

  const nlohmann::json hf_config = {
      {"architectures", {architecture}},
      {"model_type", config->architecture},
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
  std::ofstream(fs::path(output_dir) / "config.json") << hf_config.dump(2) << "\n";
  for (const char* file : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"}) {
    const fs::path source = fs::path(tokenizer_dir) / file;
    if (!fs::exists(source, error)) continue;
    fs::copy_file(source, fs::path(output_dir) / file, fs::copy_options::overwrite_existing, error);
    if (error) return Error{"cannot copy " + source.string() + ": " + error.message()};
  }
  return Status::Ok();
}

}  // namespace vllm
