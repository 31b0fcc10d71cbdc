// Random-weight BERT-style encoders (see random_encoder.h).
#include "model/random_encoder.h"

#include <cmath>
#include <optional>
#include <variant>

#include "formats/gguf_file.h"
#include "formats/gguf_writer.h"
#include "model/random_model_plan.h"

namespace vllm {

const std::vector<EncoderShape>& KnownEncoderShapes() {
  static const std::vector<EncoderShape> shapes = {
      {"bge-small", 384, 12, 12, 1536, 512, 2, 0, 2},
      {"bge-m3", 1024, 24, 16, 4096, 8192, 1, 0, 2},
      {"bge-reranker", 1024, 24, 16, 4096, 8192, 1, 1, 4},
      {"bert-tiny", 64, 2, 4, 128, 128, 2, 0, 2},
      {"bert-tiny-mean", 64, 2, 4, 128, 128, 2, 0, 1},
      {"bert-reranker-tiny", 64, 2, 4, 128, 128, 1, 1, 4},
  };
  return shapes;
}

const EncoderShape* FindEncoderShape(const std::string& name) {
  for (const EncoderShape& shape : KnownEncoderShapes()) {
    if (shape.name == name) return &shape;
  }
  return nullptr;
}

Status WriteRandomEncoder(const RandomModelOptions& options, const EncoderShape& found) {
  EncoderShape shape = found;
  if (options.num_layers_override > 0) shape.num_layers = options.num_layers_override;
  const std::optional<GgmlType> matrix = ParseGgmlType(options.dtype);
  if (!matrix || !GetSupportedTypeTraits(*matrix)) {
    return Error{"--dtype: encoder shapes take one supported type, not '" + options.dtype + "'"};
  }
  auto vocab = GgufFile::Open(options.vocab_path);
  if (!vocab) return Error{"vocabulary: " + vocab.error()};
  // The token count, without copying the tokens.
  const GgufValue* tokens = (*vocab)->Find("tokenizer.ggml.tokens");
  const auto* token_list = tokens == nullptr ? nullptr : std::get_if<GgufArray>(&tokens->data);
  if (token_list == nullptr) return Error{"vocabulary file has no tokenizer.ggml.tokens"};
  const int64_t vocab_size = static_cast<int64_t>(token_list->items.size());
  const int64_t hidden = shape.hidden_size;
  const int64_t ffn = shape.intermediate_size;

  GgufWriter writer;
  auto key = [&](const std::string& suffix, GgufValue value) {
    writer.AddMetadata("bert." + suffix, std::move(value));
  };
  writer.AddMetadata("general.architecture", GgufValue::String("bert"));
  writer.AddMetadata("general.name", GgufValue::String("random " + shape.name));
  key("context_length", GgufValue::Uint32(shape.context_length));
  key("embedding_length", GgufValue::Uint32(hidden));
  key("block_count", GgufValue::Uint32(shape.num_layers));
  key("feed_forward_length", GgufValue::Uint32(ffn));
  key("attention.head_count", GgufValue::Uint32(shape.num_heads));
  key("attention.layer_norm_epsilon", GgufValue::Float32(1e-12f));
  key("attention.causal", GgufValue::Bool(false));
  key("pooling_type", GgufValue::Uint32(shape.pooling_type));
  for (const auto& name : (*vocab)->metadata_order()) {
    if (name.rfind("tokenizer.", 0) == 0 && name != "tokenizer.ggml.token_type_count") {
      writer.AddMetadata(name, *(*vocab)->Find(name));
    }
  }
  writer.AddMetadata("tokenizer.ggml.token_type_count",
                     GgufValue::Uint32(static_cast<uint32_t>(shape.type_vocab_size)));

  // Scales keep activations O(1): 1/sqrt(fan_in) per matrix, embeddings and biases small, norm
  // weights around one.
  const float in_scale = 1.0f / std::sqrt(static_cast<float>(hidden));
  const float ffn_scale = 1.0f / std::sqrt(static_cast<float>(ffn));
  std::vector<RandomTensor> plans = {
      {"token_embd.weight", {hidden, vocab_size}, *matrix, 1.0f},
      {"token_types.weight", {hidden, shape.type_vocab_size}, GgmlType::kF32, 0.5f},
      {"position_embd.weight", {hidden, shape.context_length}, GgmlType::kF32, 0.5f},
  };
  auto add_linear = [&](const std::string& name, int64_t rows, int64_t cols, float scale) {
    plans.push_back({name + ".weight", {cols, rows}, *matrix, scale});
    plans.push_back({name + ".bias", {rows}, GgmlType::kF32, 0.1f});
  };
  auto add_norm = [&](const std::string& name) {
    plans.push_back({name + ".weight", {hidden}, GgmlType::kF32, -0.2f});
    plans.push_back({name + ".bias", {hidden}, GgmlType::kF32, 0.1f});
  };
  add_norm("token_embd_norm");
  for (int64_t l = 0; l < shape.num_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    for (const char* projection : {"attn_q", "attn_k", "attn_v", "attn_output"}) {
      add_linear(p + projection, hidden, hidden, in_scale);
    }
    add_norm(p + "attn_output_norm");
    add_linear(p + "ffn_up", ffn, hidden, in_scale);
    add_linear(p + "ffn_down", hidden, ffn, ffn_scale);
    add_norm(p + "layer_output_norm");
  }
  if (shape.num_labels > 0) {
    add_linear("cls", hidden, hidden, in_scale);
    add_linear("cls.output", shape.num_labels, hidden, in_scale);
  }
  const int64_t block_size = GetSupportedTypeTraits(*matrix)->block_size;
  for (const RandomTensor& plan : plans) {
    if (plan.shape[0] % block_size != 0) {
      return Error{"--dtype " + options.dtype + ": rows of " + std::to_string(plan.shape[0]) +
                   " values are not whole blocks of " + std::to_string(block_size)};
    }
  }
  return WriteRandomTensors(plans, options.seed, options.output_path, &writer);
}

}  // namespace vllm
