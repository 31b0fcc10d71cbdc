#include "model/gguf_hf_overrides.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/join.h"

namespace vllm {
namespace {

using Json = nlohmann::json;

enum class ValueKind { kCount, kReal };

struct GgufTwin {
  const char* hf_key;
  std::vector<const char*> gguf_keys;  // after "<arch>."
  ValueKind kind;
};

// config.json keys → llama.cpp's keys, as its converter writes them.
const std::vector<GgufTwin>& GgufTwins() {
  static const std::vector<GgufTwin> twins = {
      {"max_position_embeddings", {"context_length"}, ValueKind::kCount},
      {"rope_theta", {"rope.freq_base"}, ValueKind::kReal},
      {"rope_local_base_freq", {"rope.freq_base_swa"}, ValueKind::kReal},
      {"original_max_position_embeddings",
       {"rope.scaling.original_context_length"},
       ValueKind::kCount},
      {"rms_norm_eps", {"attention.layer_norm_rms_epsilon"}, ValueKind::kReal},
      {"layer_norm_eps", {"attention.layer_norm_epsilon"}, ValueKind::kReal},
      {"sliding_window", {"attention.sliding_window"}, ValueKind::kCount},
      {"sliding_window_pattern", {"attention.sliding_window_pattern"}, ValueKind::kCount},
      {"attn_logit_softcapping", {"attn_logit_softcapping"}, ValueKind::kReal},
      {"final_logit_softcapping", {"final_logit_softcapping"}, ValueKind::kReal},
      {"vocab_size", {"vocab_size"}, ValueKind::kCount},
      {"hidden_size", {"embedding_length"}, ValueKind::kCount},
      {"num_hidden_layers", {"block_count"}, ValueKind::kCount},
      {"intermediate_size", {"feed_forward_length"}, ValueKind::kCount},
      {"num_attention_heads", {"attention.head_count"}, ValueKind::kCount},
      {"num_key_value_heads", {"attention.head_count_kv"}, ValueKind::kCount},
      {"head_dim", {"attention.key_length", "attention.value_length"}, ValueKind::kCount},
      {"num_local_experts", {"expert_count"}, ValueKind::kCount},
      {"num_experts", {"expert_count"}, ValueKind::kCount},
      {"num_experts_per_tok", {"expert_used_count"}, ValueKind::kCount},
      {"experts_per_token", {"expert_used_count"}, ValueKind::kCount},
      {"moe_intermediate_size", {"expert_feed_forward_length"}, ValueKind::kCount},
  };
  return twins;
}

// Applied to the config after its metadata is read (hf_overrides.h).
constexpr const char* kPoolingKeys[] = {"architectures", "classifier_from_token",
                                        "is_original_qwen3_reranker", "is_matryoshka",
                                        "matryoshka_dimensions"};

Expected<GgufValue> GgufValueOf(const std::string& hf_key, const Json& value, ValueKind kind) {
  if (kind == ValueKind::kReal) {
    if (!value.is_number()) return Error{"--hf-overrides: " + hf_key + " must be a number"};
    return GgufValue::Float32(value.get<float>());
  }
  const bool whole =
      value.is_number_integer() ||
      (value.is_number_float() && std::floor(value.get<double>()) == value.get<double>());
  if (!whole || value.get<double>() < 0 ||
      value.get<double>() > std::numeric_limits<uint32_t>::max()) {
    return Error{"--hf-overrides: " + hf_key + " must be a whole number of at least 0"};
  }
  return GgufValue::Uint32(static_cast<uint32_t>(value.get<double>()));
}

// rope_scaling replaces the file's scaling whole (as vLLM replaces config.json's): its keys are
// erased, then the types llama.cpp writes as metadata (linear, yarn) are written. llama3 and
// LongRoPE keep their factors in tensors (rope_freqs, rope_factors_*), which an override cannot
// write.
Status OverrideRopeScaling(const Json& scaling, const std::string& prefix, GgufFile* file) {
  for (const char* key : {"type", "factor", "original_context_length", "yarn_beta_fast",
                          "yarn_beta_slow", "attn_factor"}) {
    file->EraseMetadata(prefix + "rope.scaling." + key);
  }
  if (scaling.is_null()) return Status::Ok();
  const std::string type = scaling.value("rope_type", scaling.value("type", std::string()));
  if (type.empty() || type == "default") return Status::Ok();
  if (type != "linear" && type != "yarn") {
    return Error{"--rope-scaling / --hf-overrides: rope_scaling type '" + type +
                 "' has no GGUF metadata (a GGUF file takes linear and yarn; llama3 and longrope "
                 "factors are tensors of the file)"};
  }
  file->SetMetadata(prefix + "rope.scaling.type", GgufValue::String(type));
  std::vector<std::pair<const char*, const char*>> twins = {{"factor", "factor"}};
  if (type == "yarn") {
    twins.insert(twins.end(), {{"original_max_position_embeddings", "original_context_length"},
                               {"beta_fast", "yarn_beta_fast"},
                               {"beta_slow", "yarn_beta_slow"}});
    for (const char* key : {"attention_factor", "mscale", "mscale_all_dim"}) {
      if (scaling.contains(key)) {
        return Error{std::string("--rope-scaling / --hf-overrides: rope_scaling.") + key +
                     " has no GGUF metadata and is not supported"};
      }
    }
    if (scaling.value("truncate", true) != true) {
      return Error{
          "--rope-scaling / --hf-overrides: rope_scaling.truncate false has no GGUF metadata"};
    }
  }
  for (const auto& [hf_key, gguf_key] : twins) {
    auto it = scaling.find(hf_key);
    if (it == scaling.end() || it->is_null()) continue;
    const bool is_count = std::string(gguf_key) == "original_context_length";
    auto value = GgufValueOf(std::string("rope_scaling.") + hf_key, *it,
                             is_count ? ValueKind::kCount : ValueKind::kReal);
    if (!value) return Error{value.error()};
    file->SetMetadata(prefix + "rope.scaling." + gguf_key, std::move(*value));
  }
  return Status::Ok();
}

}  // namespace

std::vector<std::string> GgufOverridableKeys() {
  std::vector<std::string> keys;
  for (const GgufTwin& twin : GgufTwins()) keys.push_back(twin.hf_key);
  keys.push_back("rope_scaling");
  keys.insert(keys.end(), std::begin(kPoolingKeys), std::end(kPoolingKeys));
  return keys;
}

Status ApplyHfOverridesToGgufMetadata(const Json& overrides, GgufFile* file) {
  if (overrides.empty()) return Status::Ok();
  auto arch = file->GetString("general.architecture");
  if (!arch) return Error{arch.error()};
  if (!arch->has_value()) return Error{"GGUF file has no general.architecture"};
  const std::string prefix = **arch + ".";
  for (const auto& [key, value] : overrides.items()) {
    if (key == "rope_scaling") {
      VLLM_RETURN_IF_ERROR(OverrideRopeScaling(value, prefix, file));
      continue;
    }
    if (std::find(std::begin(kPoolingKeys), std::end(kPoolingKeys), key) !=
        std::end(kPoolingKeys)) {
      continue;
    }
    auto twin = std::find_if(GgufTwins().begin(), GgufTwins().end(),
                             [&key](const GgufTwin& entry) { return key == entry.hf_key; });
    if (twin == GgufTwins().end()) {
      return Error{"--hf-overrides: key '" + key +
                   "' has no GGUF metadata twin, so it cannot override a GGUF file (keys a GGUF "
                   "file takes: " +
                   Join(GgufOverridableKeys(), ", ") + ")"};
    }
    for (const char* gguf_key : twin->gguf_keys) {
      if (value.is_null()) {
        file->EraseMetadata(prefix + gguf_key);
        continue;
      }
      auto gguf_value = GgufValueOf(key, value, twin->kind);
      if (!gguf_value) return Error{gguf_value.error()};
      file->SetMetadata(prefix + gguf_key, std::move(*gguf_value));
    }
  }
  return Status::Ok();
}

}  // namespace vllm
