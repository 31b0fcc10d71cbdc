#include "model/model_config.h"

namespace vllm {

Status ModelConfig::Validate() const {
  auto positive = [](int64_t value, const char* name) -> Status {
    if (value <= 0 || value > (int64_t{1} << 24)) {
      return Error{std::string("model config: ") + name + " = " + std::to_string(value) +
                   " is out of range"};
    }
    return Status::Ok();
  };
  VLLM_RETURN_IF_ERROR(positive(vocab_size, "vocab_size"));
  VLLM_RETURN_IF_ERROR(positive(hidden_size, "hidden_size"));
  VLLM_RETURN_IF_ERROR(positive(num_layers, "num_layers"));
  VLLM_RETURN_IF_ERROR(positive(num_heads, "num_heads"));
  VLLM_RETURN_IF_ERROR(positive(num_kv_heads, "num_kv_heads"));
  VLLM_RETURN_IF_ERROR(positive(head_dim, "head_dim"));
  VLLM_RETURN_IF_ERROR(positive(intermediate_size, "intermediate_size"));
  VLLM_RETURN_IF_ERROR(positive(max_position_embeddings, "max_position_embeddings"));
  if (num_heads % num_kv_heads != 0) {
    return Error{"model config: num_heads must be a multiple of num_kv_heads"};
  }
  if (rope_dim <= 0 || rope_dim > head_dim || rope_dim % 2 != 0) {
    return Error{"model config: rope dimension " + std::to_string(rope_dim) + " is invalid"};
  }
  if (!(rope_theta > 0) || !(rms_norm_eps > 0) || !(rope_position_scale > 0)) {
    return Error{"model config: rope_theta, rms_norm_eps and rope scale must be positive"};
  }
  return Status::Ok();
}

namespace {
// Reads an integer key into `out` when present.
Status ReadInt(const GgufFile& file, const std::string& key, int64_t* out) {
  auto value = file.GetInt(key);
  if (!value) return Error{value.error()};
  if (value->has_value()) *out = **value;
  return Status::Ok();
}

Status ReadFloat(const GgufFile& file, const std::string& key, float* out) {
  auto value = file.GetFloat(key);
  if (!value) return Error{value.error()};
  if (value->has_value()) *out = static_cast<float>(**value);
  return Status::Ok();
}
}  // namespace

Expected<ModelConfig> ModelConfigFromGguf(const GgufFile& file) {
  ModelConfig config;
  auto arch = file.GetString("general.architecture");
  if (!arch) return Error{arch.error()};
  if (!arch->has_value()) return Error{"GGUF file has no general.architecture"};
  config.architecture = **arch;
  const std::string& a = config.architecture;
  VLLM_RETURN_IF_ERROR(ReadInt(file, a + ".embedding_length", &config.hidden_size));
  VLLM_RETURN_IF_ERROR(ReadInt(file, a + ".block_count", &config.num_layers));
  VLLM_RETURN_IF_ERROR(ReadInt(file, a + ".feed_forward_length", &config.intermediate_size));
  VLLM_RETURN_IF_ERROR(ReadInt(file, a + ".attention.head_count", &config.num_heads));
  config.num_kv_heads = config.num_heads;
  VLLM_RETURN_IF_ERROR(ReadInt(file, a + ".attention.head_count_kv", &config.num_kv_heads));
  VLLM_RETURN_IF_ERROR(ReadInt(file, a + ".context_length", &config.max_position_embeddings));
  if (config.num_heads > 0) config.head_dim = config.hidden_size / config.num_heads;
  VLLM_RETURN_IF_ERROR(ReadInt(file, a + ".attention.key_length", &config.head_dim));
  config.rope_dim = config.head_dim;
  VLLM_RETURN_IF_ERROR(ReadInt(file, a + ".rope.dimension_count", &config.rope_dim));
  VLLM_RETURN_IF_ERROR(
      ReadFloat(file, a + ".attention.layer_norm_rms_epsilon", &config.rms_norm_eps));
  VLLM_RETURN_IF_ERROR(ReadFloat(file, a + ".rope.freq_base", &config.rope_theta));
  auto scaling_type = file.GetString(a + ".rope.scaling.type");
  if (!scaling_type) return Error{scaling_type.error()};
  float scaling_factor = 1.0f;
  VLLM_RETURN_IF_ERROR(ReadFloat(file, a + ".rope.scaling.factor", &scaling_factor));
  if (scaling_type->has_value() && **scaling_type == "linear" && scaling_factor > 0) {
    config.rope_position_scale = 1.0f / scaling_factor;
  } else if (scaling_type->has_value() && **scaling_type != "none" && **scaling_type != "linear") {
    return Error{"unsupported rope scaling type '" + **scaling_type + "' (supported: linear)"};
  }
  VLLM_RETURN_IF_ERROR(ReadInt(file, a + ".vocab_size", &config.vocab_size));
  if (config.vocab_size == 0) {
    const GgufValue* tokens = file.Find("tokenizer.ggml.tokens");
    if (tokens != nullptr) {
      if (const auto* array = std::get_if<GgufArray>(&tokens->data)) {
        config.vocab_size = static_cast<int64_t>(array->items.size());
      }
    }
  }
  if (a == "qwen3moe") {
    VLLM_RETURN_IF_ERROR(ReadInt(file, a + ".expert_count", &config.num_experts));
    VLLM_RETURN_IF_ERROR(ReadInt(file, a + ".expert_used_count", &config.num_experts_per_token));
    VLLM_RETURN_IF_ERROR(
        ReadInt(file, a + ".expert_feed_forward_length", &config.expert_intermediate_size));
    if (config.num_experts_per_token <= 0 || config.num_experts_per_token > config.num_experts ||
        config.expert_intermediate_size <= 0) {
      return Error{"model config: invalid expert counts or expert feed-forward length"};
    }
  }
  if (a == "phi3") {
    VLLM_RETURN_IF_ERROR(ReadInt(file, a + ".rope.scaling.original_context_length",
                                 &config.rope_original_context_length));
    VLLM_RETURN_IF_ERROR(
        ReadFloat(file, a + ".rope.scaling.attn_factor", &config.rope_attn_factor));
    if (!(config.rope_attn_factor > 0)) {
      return Error{"model config: rope.scaling.attn_factor must be positive"};
    }
  }
  if (a == "gemma3") {
    VLLM_RETURN_IF_ERROR(ReadInt(file, a + ".attention.sliding_window", &config.sliding_window));
    VLLM_RETURN_IF_ERROR(
        ReadInt(file, a + ".attention.sliding_window_pattern", &config.sliding_window_pattern));
    VLLM_RETURN_IF_ERROR(ReadFloat(file, a + ".rope.freq_base_swa", &config.rope_theta_swa));
    if (config.sliding_window < 0 || config.sliding_window_pattern <= 0 ||
        !(config.rope_theta_swa > 0)) {
      return Error{"model config: invalid sliding window, window pattern or local RoPE base"};
    }
  }
  if (a == "qwen2" || a == "qwen3" || a == "qwen3moe" || a == "phi3" || a == "gemma3") {
    config.rope_style = RopeStyle::kNeox;
  }
  VLLM_RETURN_IF_ERROR(config.Validate());
  return config;
}

}  // namespace vllm
