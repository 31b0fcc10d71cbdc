#include "model/model_config.h"

#include <cmath>

#include "model/architecture.h"

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
  if (num_experts < 0 ||
      (num_experts > 0 && (num_experts_per_token <= 0 || num_experts_per_token > num_experts ||
                           expert_intermediate_size <= 0))) {
    return Error{"model config: invalid expert counts or expert feed-forward length"};
  }
  if (sliding_window < 0 || sliding_window_pattern < 0 || !(rope_theta_swa >= 0)) {
    return Error{"model config: invalid sliding window, window pattern or local RoPE base"};
  }
  if (!(rope_attn_factor > 0) || !(attention_scale >= 0) || !(attn_logit_softcap >= 0) ||
      !(final_logit_softcap >= 0) || !(rope_yarn_factor >= 0)) {
    return Error{"model config: attention scale, soft-caps and RoPE factors must be positive"};
  }
  if (rope_yarn_factor > 0 && rope_original_context_length <= 0) {
    return Error{"model config: YaRN needs the original context length"};
  }
  return Status::Ok();
}

float ModelConfig::AttentionScale() const {
  return attention_scale > 0 ? attention_scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
}

int64_t ModelConfig::DerivedMaxModelLen() const {
  double length = static_cast<double>(max_position_embeddings);
  if (rope_yarn_factor > 0) {
    length = static_cast<double>(rope_original_context_length) * rope_yarn_factor;
  } else if (rope_position_scale != 1.0f && architecture != "gemma3" &&
             architecture != "gemma-embedding") {
    length /= rope_position_scale;
  }
  return static_cast<int64_t>(length) - position_offset;
}

Status ReadGgufInt(const GgufFile& file, const std::string& key, int64_t* out) {
  auto value = file.GetInt(key);
  if (!value) return Error{value.error()};
  if (value->has_value()) *out = **value;
  return Status::Ok();
}

Status ReadGgufFloat(const GgufFile& file, const std::string& key, float* out) {
  auto value = file.GetFloat(key);
  if (!value) return Error{value.error()};
  if (value->has_value()) *out = static_cast<float>(**value);
  return Status::Ok();
}

Expected<ModelConfig> ModelConfigFromGguf(const GgufFile& file) {
  ModelConfig config;
  auto arch = file.GetString("general.architecture");
  if (!arch) return Error{arch.error()};
  if (!arch->has_value()) return Error{"GGUF file has no general.architecture"};
  config.architecture = **arch;
  const std::string& a = config.architecture;
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".embedding_length", &config.hidden_size));
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".block_count", &config.num_layers));
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".feed_forward_length", &config.intermediate_size));
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".attention.head_count", &config.num_heads));
  config.num_kv_heads = config.num_heads;
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".attention.head_count_kv", &config.num_kv_heads));
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".context_length", &config.max_position_embeddings));
  if (config.num_heads > 0) config.head_dim = config.hidden_size / config.num_heads;
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".attention.key_length", &config.head_dim));
  config.rope_dim = config.head_dim;
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".rope.dimension_count", &config.rope_dim));
  VLLM_RETURN_IF_ERROR(
      ReadGgufFloat(file, a + ".attention.layer_norm_rms_epsilon", &config.rms_norm_eps));
  VLLM_RETURN_IF_ERROR(ReadGgufFloat(file, a + ".rope.freq_base", &config.rope_theta));
  // As config.json's sliding_window, for every family (the family's reader sets its pattern).
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".attention.sliding_window", &config.sliding_window));
  auto scaling_type = file.GetString(a + ".rope.scaling.type");
  if (!scaling_type) return Error{scaling_type.error()};
  float scaling_factor = 1.0f;
  VLLM_RETURN_IF_ERROR(ReadGgufFloat(file, a + ".rope.scaling.factor", &scaling_factor));
  const std::string scaling = scaling_type->value_or("none");
  if (scaling == "linear" && scaling_factor > 0) {
    config.rope_position_scale = 1.0f / scaling_factor;
  } else if (scaling == "yarn") {
    config.rope_yarn_factor = scaling_factor;
    VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".rope.scaling.original_context_length",
                                     &config.rope_original_context_length));
    VLLM_RETURN_IF_ERROR(
        ReadGgufFloat(file, a + ".rope.scaling.yarn_beta_fast", &config.rope_yarn_beta_fast));
    VLLM_RETURN_IF_ERROR(
        ReadGgufFloat(file, a + ".rope.scaling.yarn_beta_slow", &config.rope_yarn_beta_slow));
  } else if (scaling != "none" && scaling != "linear") {
    return Error{"unsupported rope scaling type '" + scaling + "' (supported: linear, yarn)"};
  }
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".vocab_size", &config.vocab_size));
  if (config.vocab_size == 0) {
    const GgufValue* tokens = file.Find("tokenizer.ggml.tokens");
    if (tokens != nullptr) {
      if (const auto* array = std::get_if<GgufArray>(&tokens->data)) {
        config.vocab_size = static_cast<int64_t>(array->items.size());
      }
    }
  }
  // Experts (Mixtral, Qwen3-MoE, gpt-oss): each expert's width defaults to the FFN length.
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".expert_count", &config.num_experts));
  VLLM_RETURN_IF_ERROR(ReadGgufInt(file, a + ".expert_used_count", &config.num_experts_per_token));
  if (config.num_experts > 0) config.expert_intermediate_size = config.intermediate_size;
  VLLM_RETURN_IF_ERROR(
      ReadGgufInt(file, a + ".expert_feed_forward_length", &config.expert_intermediate_size));
  const Architecture* architecture = FindArchitecture(a);
  if (architecture == nullptr) {
    return Error{"unsupported architecture '" + a +
                 "' (supported: " + SupportedArchitectureNames(false) + ")"};
  }
  config.rope_style = architecture->gguf_rope_style;
  if (architecture->read_gguf != nullptr) {
    VLLM_RETURN_IF_ERROR(architecture->read_gguf(file, &config));
  }
  VLLM_RETURN_IF_ERROR(config.Validate());
  return config;
}

}  // namespace vllm
