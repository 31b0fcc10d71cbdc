#include "model/hf_checkpoint.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace vllm {
namespace {

using Json = nlohmann::json;

// Hugging Face Llama names → llama.cpp's. Layer tensors are "model.layers.N.<suffix>".
const std::map<std::string, std::string>& LayerTensorNames() {
  static const std::map<std::string, std::string> names = {
      {"input_layernorm.weight", "attn_norm.weight"},
      {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.k_proj.weight", "attn_k.weight"},
      {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.o_proj.weight", "attn_output.weight"},
      {"self_attn.q_proj.bias", "attn_q.bias"},
      {"self_attn.k_proj.bias", "attn_k.bias"},
      {"self_attn.v_proj.bias", "attn_v.bias"},
      {"self_attn.q_norm.weight", "attn_q_norm.weight"},
      {"self_attn.k_norm.weight", "attn_k_norm.weight"},
      {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},
      {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"},
  };
  return names;
}
const std::map<std::string, std::string>& GlobalTensorNames() {
  static const std::map<std::string, std::string> names = {
      {"model.embed_tokens.weight", "token_embd.weight"},
      {"model.norm.weight", "output_norm.weight"},
      {"lm_head.weight", "output.weight"},
  };
  return names;
}

// The GGUF name of a Hugging Face tensor; empty when unknown.
std::string GgufName(const std::string& hf_name) {
  if (auto it = GlobalTensorNames().find(hf_name); it != GlobalTensorNames().end()) {
    return it->second;
  }
  const std::string prefix = "model.layers.";
  if (hf_name.rfind(prefix, 0) != 0) return "";
  const size_t dot = hf_name.find('.', prefix.size());
  if (dot == std::string::npos) return "";
  const std::string layer = hf_name.substr(prefix.size(), dot - prefix.size());
  if (layer.empty() || layer.find_first_not_of("0123456789") != std::string::npos) return "";
  auto it = LayerTensorNames().find(hf_name.substr(dot + 1));
  return it == LayerTensorNames().end() ? "" : "blk." + layer + "." + it->second;
}

template <typename T>
Status ReadField(const Json& config, const char* key, T* out) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return Status::Ok();
  if constexpr (std::is_same_v<T, bool>) {
    if (!it->is_boolean()) return Error{std::string("config.json: ") + key + " must be a boolean"};
  } else {
    if (!it->is_number()) return Error{std::string("config.json: ") + key + " must be a number"};
  }
  *out = it->get<T>();
  return Status::Ok();
}

// HF's llama3 rope scaling as per-frequency divisors of the base inverse frequencies.
Status Llama3FreqFactors(const Json& scaling, const ModelConfig& config,
                         std::vector<float>* factors) {
  double factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_context = 8192.0;
  VLLM_RETURN_IF_ERROR(ReadField(scaling, "factor", &factor));
  VLLM_RETURN_IF_ERROR(ReadField(scaling, "low_freq_factor", &low_freq_factor));
  VLLM_RETURN_IF_ERROR(ReadField(scaling, "high_freq_factor", &high_freq_factor));
  VLLM_RETURN_IF_ERROR(ReadField(scaling, "original_max_position_embeddings", &original_context));
  if (!(factor > 0) || !(high_freq_factor > low_freq_factor) || !(original_context > 0)) {
    return Error{"config.json: invalid llama3 rope_scaling"};
  }
  const double low_freq_wavelen = original_context / low_freq_factor;
  const double high_freq_wavelen = original_context / high_freq_factor;
  factors->clear();
  for (int64_t i = 0; i < config.rope_dim / 2; ++i) {
    const double inv_freq =
        std::pow(static_cast<double>(config.rope_theta), -2.0 * i / config.rope_dim);
    const double wavelen = 2.0 * M_PI / inv_freq;
    double scaled = inv_freq;
    if (wavelen > low_freq_wavelen) {
      scaled = inv_freq / factor;
    } else if (wavelen >= high_freq_wavelen) {
      const double smooth =
          (original_context / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
      scaled = (1.0 - smooth) * inv_freq / factor + smooth * inv_freq;
    }
    factors->push_back(static_cast<float>(inv_freq / scaled));
  }
  return Status::Ok();
}

}  // namespace

std::string HfTensorName(const std::string& gguf_name) {
  for (const auto& [hf, gguf] : GlobalTensorNames()) {
    if (gguf == gguf_name) return hf;
  }
  const std::string prefix = "blk.";
  if (gguf_name.rfind(prefix, 0) != 0) return "";
  const size_t dot = gguf_name.find('.', prefix.size());
  if (dot == std::string::npos) return "";
  const std::string suffix = gguf_name.substr(dot + 1);
  for (const auto& [hf, gguf] : LayerTensorNames()) {
    if (gguf == suffix) {
      return "model.layers." + gguf_name.substr(prefix.size(), dot - prefix.size()) + "." + hf;
    }
  }
  return "";
}

// config.json architectures → the architecture they load as.
const std::map<std::string, std::string>& HfArchitectures() {
  static const std::map<std::string, std::string> architectures = {
      {"LlamaForCausalLM", "llama"},
      {"MistralForCausalLM", "llama"},
      {"Qwen2ForCausalLM", "qwen2"},
      {"Qwen3ForCausalLM", "qwen3"},
  };
  return architectures;
}

std::vector<std::string> SupportedHfArchitectures() {
  std::vector<std::string> names;
  for (const auto& [name, architecture] : HfArchitectures()) names.push_back(name);
  return names;
}

std::string HfArchitectureName(const std::string& architecture) {
  for (const auto& [name, loads_as] : HfArchitectures()) {
    if (loads_as == architecture) return name;
  }
  return "";
}

Expected<ModelConfig> ModelConfigFromHfConfig(const Json& config,
                                              std::vector<float>* rope_freq_factors) {
  if (!config.is_object()) return Error{"config.json must be a JSON object"};
  std::string architecture;
  if (auto it = config.find("architectures");
      it != config.end() && it->is_array() && !it->empty() && it->front().is_string()) {
    architecture = it->front().get<std::string>();
  }
  const auto supported = SupportedHfArchitectures();
  if (std::find(supported.begin(), supported.end(), architecture) == supported.end()) {
    std::string names;
    for (const auto& name : supported) names += (names.empty() ? "" : ", ") + name;
    return Error{"unsupported architecture '" + architecture + "' (supported: " + names + ")"};
  }
  ModelConfig out;
  out.architecture = HfArchitectures().at(architecture);
  out.rope_style = RopeStyle::kNeox;
  out.max_position_embeddings = 2048;
  out.rms_norm_eps = 1e-6f;
  VLLM_RETURN_IF_ERROR(ReadField(config, "vocab_size", &out.vocab_size));
  VLLM_RETURN_IF_ERROR(ReadField(config, "hidden_size", &out.hidden_size));
  VLLM_RETURN_IF_ERROR(ReadField(config, "num_hidden_layers", &out.num_layers));
  VLLM_RETURN_IF_ERROR(ReadField(config, "num_attention_heads", &out.num_heads));
  out.num_kv_heads = out.num_heads;
  VLLM_RETURN_IF_ERROR(ReadField(config, "num_key_value_heads", &out.num_kv_heads));
  if (out.num_heads > 0) out.head_dim = out.hidden_size / out.num_heads;
  VLLM_RETURN_IF_ERROR(ReadField(config, "head_dim", &out.head_dim));
  VLLM_RETURN_IF_ERROR(ReadField(config, "intermediate_size", &out.intermediate_size));
  VLLM_RETURN_IF_ERROR(ReadField(config, "max_position_embeddings", &out.max_position_embeddings));
  VLLM_RETURN_IF_ERROR(ReadField(config, "rms_norm_eps", &out.rms_norm_eps));
  VLLM_RETURN_IF_ERROR(ReadField(config, "rope_theta", &out.rope_theta));
  out.rope_dim = out.head_dim;
  rope_freq_factors->clear();
  if (auto scaling = config.find("rope_scaling"); scaling != config.end() && !scaling->is_null()) {
    if (!scaling->is_object()) return Error{"config.json: rope_scaling must be an object"};
    std::string type = scaling->value("rope_type", scaling->value("type", std::string()));
    if (type == "linear") {
      double factor = 1.0;
      VLLM_RETURN_IF_ERROR(ReadField(*scaling, "factor", &factor));
      if (!(factor > 0)) return Error{"config.json: rope_scaling.factor must be positive"};
      out.rope_position_scale = static_cast<float>(1.0 / factor);
    } else if (type == "llama3") {
      VLLM_RETURN_IF_ERROR(Llama3FreqFactors(*scaling, out, rope_freq_factors));
    } else if (type != "default") {
      return Error{"unsupported rope_scaling type '" + type + "' (supported: linear, llama3)"};
    }
  }
  VLLM_RETURN_IF_ERROR(out.Validate());
  return out;
}

Expected<std::unique_ptr<HfTensorSource>> HfTensorSource::Create(
    const SafetensorsModel& weights, std::vector<float> rope_freq_factors) {
  std::unique_ptr<HfTensorSource> source(new HfTensorSource());
  for (const SafetensorsTensor* tensor_ptr : weights.tensors()) {
    const SafetensorsTensor& tensor = *tensor_ptr;
    if (tensor.name.ends_with("rotary_emb.inv_freq")) continue;  // recomputed from the config
    const std::string name = GgufName(tensor.name);
    if (name.empty()) {
      std::string known;
      for (const auto& [hf, gguf] : GlobalTensorNames()) known += hf + ", ";
      for (const auto& [hf, gguf] : LayerTensorNames()) known += "model.layers.N." + hf + ", ";
      return Error{"unsupported tensor '" + tensor.name +
                   "' (supported: " + known.substr(0, known.size() - 2) + ")"};
    }
    GgufTensor view;
    view.name = name;
    view.type = tensor.type;
    view.shape.assign(tensor.shape.rbegin(), tensor.shape.rend());  // ggml order
    view.data = static_cast<const uint8_t*>(tensor.data);
    view.num_bytes = tensor.num_bytes;
    source->tensors_[name] = std::move(view);
  }
  source->rope_freq_factors_ = std::move(rope_freq_factors);
  if (!source->rope_freq_factors_.empty()) {
    GgufTensor freqs;
    freqs.name = "rope_freqs.weight";
    freqs.type = GgmlType::kF32;
    freqs.shape = {static_cast<int64_t>(source->rope_freq_factors_.size())};
    freqs.data = reinterpret_cast<const uint8_t*>(source->rope_freq_factors_.data());
    freqs.num_bytes = static_cast<int64_t>(source->rope_freq_factors_.size() * sizeof(float));
    source->tensors_[freqs.name] = std::move(freqs);
  }
  return source;
}

const GgufTensor* HfTensorSource::Find(const std::string& gguf_name) const {
  auto it = tensors_.find(gguf_name);
  return it == tensors_.end() ? nullptr : &it->second;
}

Expected<HfCheckpoint> OpenHfCheckpoint(const std::string& dir) {
  HfCheckpoint checkpoint;
  const std::filesystem::path config_path = std::filesystem::path(dir) / "config.json";
  std::ifstream file(config_path, std::ios::binary);
  if (!file) return Error{"cannot read " + config_path.string()};
  std::stringstream text;
  text << file.rdbuf();
  const Json config = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) return Error{config_path.string() + " is not valid JSON"};
  std::vector<float> rope_freq_factors;
  auto model_config = ModelConfigFromHfConfig(config, &rope_freq_factors);
  if (!model_config) return Error{config_path.string() + ": " + model_config.error()};
  checkpoint.config = std::move(*model_config);
  auto weights = SafetensorsModel::OpenDirectory(dir);
  if (!weights) return Error{weights.error()};
  checkpoint.weights = std::move(*weights);
  auto source = HfTensorSource::Create(*checkpoint.weights, std::move(rope_freq_factors));
  if (!source) return Error{source.error()};
  checkpoint.source = std::move(*source);
  return checkpoint;
}

}  // namespace vllm
