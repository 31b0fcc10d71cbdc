#include "model/random_model.h"

#include <cmath>

#include "formats/gguf_file.h"
#include "formats/gguf_writer.h"
#include "kernels/ops.h"
#include "model/quant_recipe.h"

namespace vllm {
namespace {

// SplitMix64: a tiny, fast, well-mixed generator; values depend only on (seed, tensor, index).
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// FNV-1a: a stable hash of tensor names (std::hash may differ between standard libraries).
uint64_t NameHash(const std::string& name) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : name) hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

struct TensorPlan {
  std::string name;
  std::vector<int64_t> shape;  // ggml order
  GgmlType type;
  // Values uniform in [-scale, scale]; 0 means all ones (norm weights); a negative scale s means
  // uniform in [1 + s, 1 - s] (norm weights around one).
  float scale;
};

}  // namespace

const std::vector<ModelShape>& KnownModelShapes() {
  static const std::vector<ModelShape> shapes = {
      {"tinyllama-1.1b", 2048, 22, 32, 4, 5632, 2048, 10000.0f, false},
      {"smollm2-135m", 576, 30, 9, 3, 1536, 8192, 100000.0f, true},
      {"llama-tiny", 128, 4, 4, 2, 384, 1024, 10000.0f, false},
      {"llama-d256", 256, 3, 8, 4, 768, 1024, 10000.0f, false},  // the quantized oracles' shape
      {"qwen3-0.6b", 1024, 28, 16, 8, 3072, 40960, 1000000.0f, true, "qwen3", 128},
      {"qwen2-tiny", 128, 4, 4, 2, 384, 1024, 1000000.0f, true, "qwen2"},
      {"qwen3-tiny", 128, 4, 4, 2, 384, 1024, 1000000.0f, true, "qwen3", 64},
      {"mixtral-tiny", 128, 4, 4, 2, 256, 1024, 1000000.0f, false, "llama", 0, 8, 2},
      {"qwen3-30b-a3b", 2048, 48, 32, 4, 768, 40960, 1000000.0f, false, "qwen3moe", 128, 128, 8},
      {"gemma2-tiny", 128, 4, 4, 2, 256, 1024, 10000.0f, true, "gemma2", 32, 0, 0, 8},
      {"gemma3-1b", 1152, 26, 4, 1, 6912, 32768, 1000000.0f, true, "gemma3", 256, 0, 0, 512},
      {"gpt-oss-tiny", 128, 4, 4, 2, 128, 1024, 150000.0f, false, "gpt-oss", 32, 8, 2, 8},
      {"gpt-oss-20b", 2880, 24, 64, 8, 2880, 131072, 150000.0f, false, "gpt-oss", 64, 32, 4, 128},
  };
  return shapes;
}

const ModelShape* FindModelShape(const std::string& name) {
  for (const auto& shape : KnownModelShapes()) {
    if (shape.name == name) return &shape;
  }
  return nullptr;
}

Status WriteRandomModel(const RandomModelOptions& options) {
  const ModelShape* found = FindModelShape(options.shape);
  if (found == nullptr) {
    std::string names;
    for (const auto& shape : KnownModelShapes()) names += (names.empty() ? "" : ", ") + shape.name;
    return Error{"unknown shape '" + options.shape + "' (known: " + names + ")"};
  }
  ModelShape shape = *found;
  if (options.num_layers_override > 0) shape.num_layers = options.num_layers_override;
  auto recipe = QuantRecipe::Parse(options.dtype);
  if (!recipe) return Error{"--dtype: " + recipe.error()};
  auto vocab = GgufFile::Open(options.vocab_path);
  if (!vocab) return Error{"vocabulary: " + vocab.error()};
  auto tokens = (*vocab)->GetStringArray("tokenizer.ggml.tokens");
  if (!tokens || !tokens->has_value()) {
    return Error{"vocabulary file has no tokenizer.ggml.tokens"};
  }
  const int64_t vocab_size = static_cast<int64_t>((*tokens)->size());
  const int64_t hidden = shape.hidden_size;
  const int64_t head_dim = shape.head_dim > 0 ? shape.head_dim : hidden / shape.num_heads;
  const int64_t q_size = shape.num_heads * head_dim;
  const int64_t kv_size = shape.num_kv_heads * head_dim;
  const std::string& arch = shape.architecture;

  GgufWriter writer;
  writer.AddMetadata("general.architecture", GgufValue::String(arch));
  writer.AddMetadata("general.name", GgufValue::String("random " + shape.name));
  writer.AddMetadata("general.file_type", GgufValue::Uint32(recipe->file_type()));
  if (GetSupportedTypeTraits(recipe->base_type())->block_size > 1) {
    writer.AddMetadata("general.quantization_version", GgufValue::Uint32(2));
  }
  writer.AddMetadata(arch + ".vocab_size", GgufValue::Uint32(static_cast<uint32_t>(vocab_size)));
  writer.AddMetadata(arch + ".context_length", GgufValue::Uint32(shape.context_length));
  writer.AddMetadata(arch + ".embedding_length", GgufValue::Uint32(hidden));
  writer.AddMetadata(arch + ".block_count", GgufValue::Uint32(shape.num_layers));
  writer.AddMetadata(arch + ".feed_forward_length", GgufValue::Uint32(shape.intermediate_size));
  writer.AddMetadata(arch + ".rope.dimension_count", GgufValue::Uint32(head_dim));
  writer.AddMetadata(arch + ".attention.head_count", GgufValue::Uint32(shape.num_heads));
  writer.AddMetadata(arch + ".attention.head_count_kv", GgufValue::Uint32(shape.num_kv_heads));
  writer.AddMetadata(arch + ".attention.key_length", GgufValue::Uint32(head_dim));
  writer.AddMetadata(arch + ".attention.value_length", GgufValue::Uint32(head_dim));
  writer.AddMetadata(arch + ".attention.layer_norm_rms_epsilon", GgufValue::Float32(1e-5f));
  writer.AddMetadata(arch + ".rope.freq_base", GgufValue::Float32(shape.rope_theta));
  const bool is_gemma = arch == "gemma2" || arch == "gemma3";
  const bool is_gpt_oss = arch == "gpt-oss";
  if (shape.num_experts > 0) {
    writer.AddMetadata(arch + ".expert_count", GgufValue::Uint32(shape.num_experts));
    writer.AddMetadata(arch + ".expert_used_count", GgufValue::Uint32(shape.num_experts_per_token));
    writer.AddMetadata(arch + ".expert_feed_forward_length",
                       GgufValue::Uint32(shape.intermediate_size));
  }
  if (shape.sliding_window > 0) {
    writer.AddMetadata(arch + ".attention.sliding_window", GgufValue::Uint32(shape.sliding_window));
  }
  if (arch == "gemma2") {
    writer.AddMetadata(arch + ".attn_logit_softcapping", GgufValue::Float32(50.0f));
    writer.AddMetadata(arch + ".final_logit_softcapping", GgufValue::Float32(30.0f));
  }
  if (arch == "gemma3") writer.AddMetadata(arch + ".rope.freq_base_swa", GgufValue::Float32(1e4f));
  if (is_gpt_oss) {  // YaRN x32 over a pretraining context of 1/32 of the shape's
    writer.AddMetadata(arch + ".rope.scaling.type", GgufValue::String("yarn"));
    writer.AddMetadata(arch + ".rope.scaling.factor", GgufValue::Float32(32.0f));
    writer.AddMetadata(arch + ".rope.scaling.original_context_length",
                       GgufValue::Uint32(shape.context_length / 32));
  }
  for (const auto& key : (*vocab)->metadata_order()) {
    if (key.rfind("tokenizer.", 0) == 0) writer.AddMetadata(key, *(*vocab)->Find(key));
  }

  // Scales keep activations O(1) through the residual stream: 1/sqrt(fan_in) per matrix.
  // Matrices start in the recipe's base type; its mix and fallbacks are applied below.
  const GgmlType matrix = recipe->base_type();
  std::vector<TensorPlan> plans;
  const float embed_scale = 1.0f;
  plans.push_back({"token_embd.weight", {hidden, vocab_size}, matrix, embed_scale});
  const int64_t ffn = shape.intermediate_size;
  const bool qkv_bias = arch == "qwen2" || is_gpt_oss;
  const bool qk_norm = arch == "qwen3" || arch == "qwen3moe" || arch == "gemma3";
  for (int64_t l = 0; l < shape.num_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const float in_scale = 1.0f / std::sqrt(static_cast<float>(hidden));
    const float ffn_scale = 1.0f / std::sqrt(static_cast<float>(ffn));
    // Norm weights around one (Gemma's include its +1), biases small, f32 as llama.cpp writes them.
    const float norm = is_gemma ? -0.5f : 0.0f;
    plans.push_back({p + "attn_norm.weight", {hidden}, GgmlType::kF32, norm});
    plans.push_back({p + "attn_q.weight", {hidden, q_size}, matrix, in_scale});
    plans.push_back({p + "attn_k.weight", {hidden, kv_size}, matrix, in_scale});
    plans.push_back({p + "attn_v.weight", {hidden, kv_size}, matrix, in_scale});
    if (qkv_bias) {
      plans.push_back({p + "attn_q.bias", {q_size}, GgmlType::kF32, 0.1f});
      plans.push_back({p + "attn_k.bias", {kv_size}, GgmlType::kF32, 0.1f});
      plans.push_back({p + "attn_v.bias", {kv_size}, GgmlType::kF32, 0.1f});
    }
    if (qk_norm) {
      plans.push_back({p + "attn_q_norm.weight", {head_dim}, GgmlType::kF32, -0.5f});
      plans.push_back({p + "attn_k_norm.weight", {head_dim}, GgmlType::kF32, -0.5f});
    }
    plans.push_back({p + "attn_output.weight",
                     {q_size, hidden},
                     matrix,
                     1.0f / std::sqrt(static_cast<float>(q_size))});
    if (is_gpt_oss) {
      plans.push_back({p + "attn_output.bias", {hidden}, GgmlType::kF32, 0.1f});
      plans.push_back({p + "attn_sinks.weight", {shape.num_heads}, GgmlType::kF32, 1.0f});
    }
    // gpt-oss calls its pre-FFN norm post_attention_norm; Gemma has both kinds.
    if (is_gemma || is_gpt_oss) {
      plans.push_back({p + "post_attention_norm.weight", {hidden}, GgmlType::kF32, norm});
    }
    if (!is_gpt_oss) plans.push_back({p + "ffn_norm.weight", {hidden}, GgmlType::kF32, norm});
    if (shape.num_experts > 0) {
      const int64_t experts = shape.num_experts;
      plans.push_back({p + "ffn_gate_inp.weight", {hidden, experts}, GgmlType::kF32, in_scale});
      plans.push_back({p + "ffn_gate_exps.weight", {hidden, ffn, experts}, matrix, in_scale});
      plans.push_back({p + "ffn_up_exps.weight", {hidden, ffn, experts}, matrix, in_scale});
      plans.push_back({p + "ffn_down_exps.weight", {ffn, hidden, experts}, matrix, ffn_scale});
      if (is_gpt_oss) {
        plans.push_back({p + "ffn_gate_inp.bias", {experts}, GgmlType::kF32, 0.1f});
        plans.push_back({p + "ffn_gate_exps.bias", {ffn, experts}, GgmlType::kF32, 0.1f});
        plans.push_back({p + "ffn_up_exps.bias", {ffn, experts}, GgmlType::kF32, 0.1f});
        plans.push_back({p + "ffn_down_exps.bias", {hidden, experts}, GgmlType::kF32, 0.1f});
      }
    } else {
      plans.push_back({p + "ffn_gate.weight", {hidden, ffn}, matrix, in_scale});
      plans.push_back({p + "ffn_up.weight", {hidden, ffn}, matrix, in_scale});
      plans.push_back({p + "ffn_down.weight", {ffn, hidden}, matrix, ffn_scale});
    }
    if (is_gemma) plans.push_back({p + "post_ffw_norm.weight", {hidden}, GgmlType::kF32, norm});
  }
  plans.push_back({"output_norm.weight", {hidden}, GgmlType::kF32, is_gemma ? -0.5f : 0.0f});
  if (!shape.tie_word_embeddings) {
    plans.push_back({"output.weight",
                     {hidden, vocab_size},
                     matrix,
                     1.0f / std::sqrt(static_cast<float>(hidden))});
  }
  for (auto& plan : plans) {
    if (plan.shape.size() >= 2 && plan.type != GgmlType::kF32) {
      plan.type = recipe->TypeFor(plan.name, shape.num_layers, plan.shape[0]);
    }
  }
  for (const auto& plan : plans) writer.AddTensor(plan.name, plan.shape, plan.type);
  VLLM_RETURN_IF_ERROR(writer.Begin(options.output_path));

  std::vector<float> row;
  std::vector<uint8_t> data;
  for (size_t index = 0; index < plans.size(); ++index) {
    const TensorPlan& plan = plans[index];
    const int64_t cols = plan.shape[0];
    int64_t rows = 1;  // every dimension after the first
    for (size_t d = 1; d < plan.shape.size(); ++d) rows *= plan.shape[d];
    const int64_t row_bytes = GgufWriter::TensorBytes({cols}, plan.type);
    const uint64_t tensor_seed = Mix(options.seed ^ NameHash(plan.name));
    row.resize(cols);
    data.resize(rows * row_bytes);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        if (plan.scale == 0.0f) {
          row[c] = 1.0f;
          continue;
        }
        // 24 random bits → uniform in [-1, 1).
        uint64_t bits = Mix(tensor_seed + static_cast<uint64_t>(r * cols + c)) >> 40;
        const float uniform = static_cast<float>(bits) * (2.0f / 16777216.0f) - 1.0f;
        row[c] = plan.scale > 0.0f ? uniform * plan.scale : 1.0f + uniform * plan.scale;
      }
      kernels::QuantizeRow(plan.type, row.data(), cols, data.data() + r * row_bytes);
    }
    VLLM_RETURN_IF_ERROR(writer.WriteTensorData(index, data.data(), data.size()));
  }
  return writer.Finish();
}

}  // namespace vllm
