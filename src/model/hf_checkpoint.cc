#include "model/hf_checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/mapped_file.h"
#include "formats/safetensors_file.h"
#include "kernels/ops.h"
#include "model/hf_overrides.h"
#include "model/hf_quant/linear_parts.h"
#include "model/hf_quant/quantized_linear.h"

namespace vllm {
namespace {

using Json = nlohmann::json;

// HF's llama3 rope scaling as per-frequency divisors of the base inverse frequencies.
Status Llama3FreqFactors(const Json& scaling, const ModelConfig& config,
                         std::vector<float>* factors) {
  double factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_context = 8192.0;
  VLLM_RETURN_IF_ERROR(ReadHfField(scaling, "factor", &factor));
  VLLM_RETURN_IF_ERROR(ReadHfField(scaling, "low_freq_factor", &low_freq_factor));
  VLLM_RETURN_IF_ERROR(ReadHfField(scaling, "high_freq_factor", &high_freq_factor));
  VLLM_RETURN_IF_ERROR(ReadHfField(scaling, "original_max_position_embeddings", &original_context));
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

// The f32 values of a JSON array of numbers of length `size`.
Status ReadFactorArray(const Json& scaling, const char* key, int64_t size,
                       std::vector<float>* out) {
  auto it = scaling.find(key);
  if (it == scaling.end() || !it->is_array() || static_cast<int64_t>(it->size()) != size) {
    return Error{std::string("config.json: rope_scaling.") + key + " must be an array of " +
                 std::to_string(size) + " numbers"};
  }
  out->clear();
  for (const Json& value : *it) {
    if (!value.is_number()) {
      return Error{std::string("config.json: rope_scaling.") + key + " must hold numbers"};
    }
    out->push_back(value.get<float>());
  }
  return Status::Ok();
}

// rope_scaling → the config's RoPE scaling fields and derived factor tensors.
Status ReadRopeScaling(const Json& text_config, ModelConfig* out, HfDerivedTensors* derived) {
  auto scaling = text_config.find("rope_scaling");
  if (scaling == text_config.end() || scaling->is_null()) return Status::Ok();
  if (!scaling->is_object()) return Error{"config.json: rope_scaling must be an object"};
  const std::string type = scaling->value("rope_type", scaling->value("type", std::string()));
  double factor = 1.0;
  VLLM_RETURN_IF_ERROR(ReadHfField(*scaling, "factor", &factor));
  if (!(factor > 0)) return Error{"config.json: rope_scaling.factor must be positive"};
  if (type == "linear") {
    out->rope_position_scale = static_cast<float>(1.0 / factor);
  } else if (type == "llama3") {
    std::vector<float> factors;
    VLLM_RETURN_IF_ERROR(Llama3FreqFactors(*scaling, *out, &factors));
    derived->tensors["rope_freqs.weight"] = std::move(factors);
  } else if (type == "yarn") {
    out->rope_yarn_factor = static_cast<float>(factor);
    VLLM_RETURN_IF_ERROR(ReadHfField(*scaling, "original_max_position_embeddings",
                                     &out->rope_original_context_length));
    VLLM_RETURN_IF_ERROR(ReadHfField(*scaling, "beta_fast", &out->rope_yarn_beta_fast));
    VLLM_RETURN_IF_ERROR(ReadHfField(*scaling, "beta_slow", &out->rope_yarn_beta_slow));
    VLLM_RETURN_IF_ERROR(ReadHfField(*scaling, "truncate", &out->rope_yarn_truncate));
    if (scaling->contains("attention_factor") || scaling->contains("mscale")) {
      return Error{"config.json: yarn attention_factor / mscale overrides are not supported"};
    }
  } else if (type == "longrope" || type == "su") {
    // Phi-3: short factors below the original context, long ones from it on; cos and sin scaled
    // by sqrt(1 + ln(max / original) / ln(original)) unless attention_factor is given.
    VLLM_RETURN_IF_ERROR(ReadHfField(text_config, "original_max_position_embeddings",
                                     &out->rope_original_context_length));
    VLLM_RETURN_IF_ERROR(ReadHfField(*scaling, "original_max_position_embeddings",
                                     &out->rope_original_context_length));
    const int64_t original = out->rope_original_context_length;
    if (original <= 0) return Error{"config.json: longrope needs original_max_position_embeddings"};
    const int64_t num_freqs = out->rope_dim / 2;
    VLLM_RETURN_IF_ERROR(ReadFactorArray(*scaling, "short_factor", num_freqs,
                                         &derived->tensors["rope_factors_short.weight"]));
    VLLM_RETURN_IF_ERROR(ReadFactorArray(*scaling, "long_factor", num_freqs,
                                         &derived->tensors["rope_factors_long.weight"]));
    const double extension = static_cast<double>(out->max_position_embeddings) / original;
    double attention_factor =
        extension <= 1.0 ? 1.0 : std::sqrt(1.0 + std::log(extension) / std::log(original));
    VLLM_RETURN_IF_ERROR(ReadHfField(*scaling, "attention_factor", &attention_factor));
    out->rope_attn_factor = static_cast<float>(attention_factor);
  } else if (type != "default") {
    return Error{"unsupported rope_scaling type '" + type +
                 "' (supported: linear, llama3, yarn, longrope)"};
  }
  return Status::Ok();
}

}  // namespace

Expected<ModelConfig> ModelConfigFromHfConfig(const Json& config, HfDerivedTensors* derived) {
  if (!config.is_object()) return Error{"config.json must be a JSON object"};
  std::string hf_name;
  if (auto it = config.find("architectures");
      it != config.end() && it->is_array() && !it->empty() && it->front().is_string()) {
    hf_name = it->front().get<std::string>();
  }
  const Architecture* architecture = FindHfArchitecture(hf_name);
  if (architecture == nullptr) {
    return Error{"unsupported architecture '" + hf_name +
                 "' (supported: " + SupportedArchitectureNames(true) + ")"};
  }
  // Multimodal wrappers keep the text model's keys in text_config.
  Json text = config;
  if (auto it = config.find("text_config"); it != config.end() && it->is_object()) {
    for (const auto& [key, value] : it->items()) text[key] = value;
  }
  ModelConfig out;
  out.architecture = architecture->name;
  out.rope_style = RopeStyle::kNeox;
  out.max_position_embeddings = 2048;
  out.rms_norm_eps = 1e-6f;
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "vocab_size", &out.vocab_size));
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "hidden_size", &out.hidden_size));
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "num_hidden_layers", &out.num_layers));
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "num_attention_heads", &out.num_heads));
  out.num_kv_heads = out.num_heads;
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "num_key_value_heads", &out.num_kv_heads));
  if (out.num_heads > 0) out.head_dim = out.hidden_size / out.num_heads;
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "head_dim", &out.head_dim));
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "intermediate_size", &out.intermediate_size));
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "max_position_embeddings", &out.max_position_embeddings));
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "rms_norm_eps", &out.rms_norm_eps));
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "rope_theta", &out.rope_theta));
  double partial_rotary_factor = 1.0;
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "partial_rotary_factor", &partial_rotary_factor));
  if (!(partial_rotary_factor > 0 && partial_rotary_factor <= 1)) {
    return Error{"config.json: partial_rotary_factor must be in (0, 1]"};
  }
  out.rope_dim = static_cast<int64_t>(out.head_dim * partial_rotary_factor);
  VLLM_RETURN_IF_ERROR(ReadHfField(text, "sliding_window", &out.sliding_window));
  VLLM_RETURN_IF_ERROR(ReadRopeScaling(text, &out, derived));
  if (architecture->read_hf != nullptr) {
    VLLM_RETURN_IF_ERROR(architecture->read_hf(text, &out, derived));
  }
  // Newer configs list each layer's attention; it must agree with the window pattern.
  if (auto types = text.find("layer_types"); types != text.end() && types->is_array()) {
    for (size_t layer = 0; layer < types->size(); ++layer) {
      const bool sliding = (*types)[layer] == "sliding_attention";
      if (sliding != (out.LayerSlidingWindow(static_cast<int64_t>(layer)) > 0)) {
        return Error{"config.json: layer_types do not follow a sliding window on all but every " +
                     std::to_string(out.sliding_window_pattern) + "-th layer"};
      }
    }
  }
  VLLM_RETURN_IF_ERROR(out.Validate());
  return out;
}

std::string TextModelTensorName(const std::string& hf_name) {
  for (const char* vision : {"vision_tower.", "multi_modal_projector.", "model.vision_tower.",
                             "model.multi_modal_projector."}) {
    if (hf_name.starts_with(vision)) return "";
  }
  for (const auto& [wrapped, text] :
       {std::pair<const char*, const char*>{"model.language_model.", "model."},
        {"language_model.model.", "model."},
        {"language_model.lm_head.", "lm_head."}}) {
    if (hf_name.starts_with(wrapped)) return text + hf_name.substr(std::strlen(wrapped));
  }
  for (const char* bare : {"layers.", "embed_tokens.", "norm."}) {
    if (hf_name.starts_with(bare)) return "model." + hf_name;
  }
  return hf_name;
}

void HfTensorSource::AddOwned(OwnedTensor tensor) {
  std::vector<uint8_t>& bytes = owned_bytes_[tensor.name] = std::move(tensor.bytes);
  GgufTensor view;
  view.name = tensor.name;
  view.type = tensor.type;
  view.shape = std::move(tensor.shape);
  view.data = bytes.data();
  view.num_bytes = static_cast<int64_t>(bytes.size());
  tensors_[tensor.name] = std::move(view);
}

void HfTensorSource::AddOwned(const std::string& gguf_name, const std::vector<int64_t>& shape,
                              const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  AddOwned({gguf_name, GgmlType::kF32, shape, std::move(bytes)});
}

Expected<std::unique_ptr<HfTensorSource>> HfTensorSource::Create(
    const SafetensorsModel& weights, const Architecture& architecture, HfDerivedTensors derived,
    const QuantizationConfig& quantization, ThreadPool* pool) {
  std::unique_ptr<HfTensorSource> source(new HfTensorSource());
  // Quantized linears first, one layer at a time (its rows split across the pool): only one
  // layer's unpacked codes are alive beside the converted weights.
  std::set<const SafetensorsTensor*> consumed;
  auto linears = FindQuantizedLinears(weights, quantization);
  if (!linears) return Error{linears.error()};
  for (const QuantizedLinearTensors& linear : *linears) {
    for (const auto& [suffix, part] : linear.parts) consumed.insert(part);
    const std::string hf_name = TextModelTensorName(linear.module + ".weight");
    if (hf_name.empty()) continue;  // a vision tower's
    const std::string name = TranslateTensorName(architecture.hf_tensors, hf_name, true);
    if (name.empty()) {
      return Error{"tensor '" + linear.module + ".weight' is stored " +
                   QuantMethodName(quantization.method) + "-quantized, but architecture " +
                   architecture.name +
                   " loads it only by converting its Hugging Face layout, which quantized "
                   "weights do not support"};
    }
    auto converted = ConvertQuantizedLinear(quantization, linear, pool);
    if (!converted) return Error{converted.error()};
    converted->weight.name = name;
    if (!converted->input_order.empty()) {
      source->input_orders_[name] = std::move(converted->input_order);
    }
    source->quantized_linears_.insert(name);
    source->AddOwned(std::move(converted->weight));
    // The packed parts are read once: their file pages need not stay resident.
    for (const auto& [suffix, part] : linear.parts) ReleaseMappedPages(part->data, part->num_bytes);
  }
  for (const SafetensorsTensor* tensor_ptr : weights.tensors()) {
    const SafetensorsTensor& tensor = *tensor_ptr;
    if (consumed.contains(tensor_ptr)) continue;
    if (tensor.name.ends_with("rotary_emb.inv_freq")) continue;  // recomputed from the config
    // FP8 checkpoints' attention scales for an FP8 KV cache (self_attn.k_scale, v_scale, q_scale,
    // prob_scale): this KV cache quantizes each row with its own scale, so they go unused, as in
    // vLLM with --kv-cache-dtype auto.
    if (tensor.name.ends_with("attn.k_scale") || tensor.name.ends_with("attn.v_scale") ||
        tensor.name.ends_with("attn.q_scale") || tensor.name.ends_with("attn.prob_scale")) {
      continue;
    }
    const std::string hf_name = TextModelTensorName(tensor.name);
    if (hf_name.empty()) continue;
    const std::string name = TranslateTensorName(architecture.hf_tensors, hf_name, true);
    if (name.empty()) {
      std::vector<OwnedTensor> converted;
      Expected<bool> known = false;
      if (architecture.convert_hf_tensor != nullptr) {
        known = architecture.convert_hf_tensor(weights, tensor, &converted);
        if (!known) return Error{"tensor '" + tensor.name + "': " + known.error()};
      }
      if (!*known) {
        return Error{"unsupported tensor '" + tensor.name + "' for architecture " +
                     architecture.name};
      }
      for (OwnedTensor& part : converted) source->AddOwned(std::move(part));
      continue;
    }
    if (!IsSafetensorsFloatType(tensor.type)) {  // U8 is only ever an input of a conversion
      return Error{"tensor '" + tensor.name + "' must be F32, F16 or BF16"};
    }
    GgufTensor view;
    view.name = name;
    view.type = tensor.type;
    view.shape.assign(tensor.shape.rbegin(), tensor.shape.rend());  // ggml order
    view.data = static_cast<const uint8_t*>(tensor.data);
    view.num_bytes = tensor.num_bytes;
    const bool offset_norm = architecture.hf_norms_offset_by_one && name.ends_with("norm.weight");
    if (offset_norm && view.shape.size() != 1) {
      return Error{"tensor '" + tensor.name + "' must be a 1-D float vector"};
    }
    // The kernels load whole elements; a tensor the file leaves misaligned (after an odd-length
    // U8 tensor such as bitsandbytes' quant_state) is kept as an aligned f32 copy instead.
    const bool misaligned =
        reinterpret_cast<uintptr_t>(tensor.data) % SafetensorsElementBytes(tensor.type) != 0;
    if (offset_norm || misaligned) {
      auto values = ReadFloats(tensor);
      if (!values) return Error{values.error()};
      if (offset_norm) {
        for (float& value : *values) value += 1.0f;
      }
      source->AddOwned(name, view.shape, *values);
      continue;
    }
    source->tensors_[name] = std::move(view);
  }
  for (const auto& [name, values] : derived.tensors) {
    source->AddOwned(name, {static_cast<int64_t>(values.size())}, values);
  }
  return source;
}

const GgufTensor* HfTensorSource::Find(const std::string& gguf_name) const {
  auto it = tensors_.find(gguf_name);
  return it == tensors_.end() ? nullptr : &it->second;
}

void HfTensorSource::ReleaseQuantizedLinears() {
  for (const std::string& name : quantized_linears_) {
    released_values_ += tensors_.at(name).num_elements();
    tensors_.erase(name);
    owned_bytes_.erase(name);
  }
  quantized_linears_.clear();
}

int64_t HfTensorSource::num_values() const {
  int64_t count = released_values_;
  for (const auto& [name, tensor] : tensors_) count += tensor.num_elements();
  return count;
}

const std::vector<int32_t>* HfTensorSource::InputOrder(const std::string& gguf_name) const {
  auto it = input_orders_.find(gguf_name);
  return it == input_orders_.end() ? nullptr : &it->second;
}

bool HfTensorSource::IsQuantizedLinear(const std::string& gguf_name) const {
  return quantized_linears_.contains(gguf_name);
}

namespace {

// The sentence-transformers Dense modules' weights as f32 tensors dense_<index>.weight (ggml
// shape {in, out}), as llama.cpp converts them.
Status AddDenseModules(const std::string& dir, HfTensorSource* source) {
  auto modules = ReadSentenceTransformersDense(dir);
  if (!modules) return Error{modules.error()};
  for (const DenseModuleFiles& module : *modules) {
    auto weights = SafetensorsModel::OpenDirectory(module.dir);
    if (!weights) return Error{module.dir + ": " + weights.error()};
    const SafetensorsTensor* linear = (*weights)->FindTensor("linear.weight");
    if (linear == nullptr || linear->shape.size() != 2 || !IsSafetensorsFloatType(linear->type)) {
      return Error{module.dir + ": needs a 2-D float tensor linear.weight"};
    }
    const int64_t count = linear->shape[0] * linear->shape[1];
    std::vector<uint8_t> stored(linear->num_bytes);  // aligned for the conversion
    std::memcpy(stored.data(), linear->data, stored.size());
    OwnedTensor tensor{"dense_" + std::to_string(module.index) + ".weight",
                       GgmlType::kF32,
                       {linear->shape[1], linear->shape[0]},
                       std::vector<uint8_t>(count * sizeof(float))};
    kernels::DequantizeRow(linear->type, stored.data(), count,
                           reinterpret_cast<float*>(tensor.bytes.data()));
    source->AddOwned(std::move(tensor));
  }
  return Status::Ok();
}

}  // namespace

Expected<HfCheckpoint> OpenHfCheckpoint(const std::string& dir, const Json& hf_overrides,
                                        const std::string& quantization, ThreadPool* pool,
                                        const std::string& config_dir) {
  HfCheckpoint checkpoint;
  const std::filesystem::path config_path =
      std::filesystem::path(config_dir.empty() ? dir : config_dir) / "config.json";
  std::ifstream file(config_path, std::ios::binary);
  if (!file) return Error{"cannot read " + config_path.string()};
  std::stringstream text;
  text << file.rdbuf();
  Json config = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) return Error{config_path.string() + " is not valid JSON"};
  config = MergeHfOverrides(std::move(config), hf_overrides);
  // First, so a scheme that cannot load names its field rather than failing later on a dtype.
  const bool requests_gguf_type = !quantization.empty() && !ParseQuantMethod(quantization);
  auto quantization_config =
      ReadQuantizationConfig(dir, config, requests_gguf_type ? "" : quantization);
  if (!quantization_config) return Error{quantization_config.error()};
  checkpoint.quantization = std::move(*quantization_config);
  if (requests_gguf_type && checkpoint.quantization.method != QuantMethod::kNone) {
    // vLLM refuses a --quantization that disagrees with the checkpoint's method.
    const std::string method = QuantMethodName(checkpoint.quantization.method);
    return Error{"--quantization " + quantization +
                 " quantizes unquantized weights at load, but the checkpoint is already "
                 "quantized with " +
                 method + " (quantization_config.quant_method); leave --quantization out or give " +
                 method};
  }
  HfDerivedTensors derived;
  auto model_config = ModelConfigFromHfConfig(config, &derived);
  if (!model_config) return Error{config_path.string() + ": " + model_config.error()};
  checkpoint.config = std::move(*model_config);
  VLLM_RETURN_IF_ERROR(ReadHfPoolerConfig(
      dir, config, config["architectures"][0].get<std::string>(), &checkpoint.config.pooler));
  auto weights = SafetensorsModel::OpenDirectory(dir);
  if (!weights) return Error{weights.error()};
  checkpoint.weights = std::move(*weights);
  auto source =
      HfTensorSource::Create(*checkpoint.weights, *FindArchitecture(checkpoint.config.architecture),
                             std::move(derived), checkpoint.quantization, pool);
  if (!source) return Error{source.error()};
  VLLM_RETURN_IF_ERROR(AddDenseModules(dir, source->get()));
  checkpoint.source = std::move(*source);
  return checkpoint;
}

}  // namespace vllm
