// Hugging Face model directories: config.json → ModelConfig, and the safetensors weights seen
// through llama.cpp's tensor names (HfTensorSource), so the architectures load them as they load
// GGUF files. The architecture descriptors (architecture.h) give each family's config keys and
// tensor names; this file reads what all families share.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/thread_pool.h"
#include "formats/safetensors_index.h"
#include "model/architecture.h"
#include "model/hf_quant/quantization_config.h"
#include "model/model_config.h"
#include "model/tensor_source.h"

namespace vllm {

// config.json → ModelConfig (rope_style kNeox: Hugging Face keeps Q/K unpermuted). Multimodal
// wrappers' `text_config` is read over the top-level keys. RoPE scaling "linear", "llama3",
// "yarn" and "longrope" are supported; llama3's per-frequency divisors and LongRoPE's factors go
// to `derived` as rope_freqs.weight / rope_factors_{short,long}.weight.
Expected<ModelConfig> ModelConfigFromHfConfig(const nlohmann::json& config,
                                              HfDerivedTensors* derived);

// A model directory's safetensors tensors under their GGUF names, shapes in ggml order.
class HfTensorSource : public TensorSource {
 public:
  // Maps every tensor of `weights` through `architecture`'s names (or converts it, where the
  // architecture converts); an unknown tensor name is an error naming it. Vision-tower and
  // projector tensors of multimodal checkpoints are skipped. With a `quantization` method, each
  // quantized linear layer (FindQuantizedLinears) is first converted, one at a time (its rows on
  // `pool`'s threads when given), into the kernel type its rule picks, under its weight's GGUF
  // name, and its stored parts are consumed.
  static Expected<std::unique_ptr<HfTensorSource>> Create(
      const SafetensorsModel& weights, const Architecture& architecture, HfDerivedTensors derived,
      const QuantizationConfig& quantization = {}, ThreadPool* pool = nullptr);
  const GgufTensor* Find(const std::string& gguf_name) const override;
  // The input permutation of a converted GPTQ desc_act / compressed-tensors actorder weight.
  const std::vector<int32_t>* InputOrder(const std::string& gguf_name) const override;
  // Whether `gguf_name` is a quantized linear layer's converted weight.
  bool IsQuantizedLinear(const std::string& gguf_name) const override;
  // The values of every tensor as the model sees them (a quantized layer's unpacked count).
  int64_t num_values() const;
  // Frees the converted quantized linears once the model has copied them into its weights
  // (LoadModelFromPath): they would otherwise stay resident beside them for the model's life.
  // Find and IsQuantizedLinear no longer see them.
  void ReleaseQuantizedLinears();
  // Adds a tensor whose bytes the source keeps alive (shape in ggml order).
  void AddOwned(OwnedTensor tensor);

 private:
  HfTensorSource() = default;
  // The same for f32 `values`.
  void AddOwned(const std::string& gguf_name, const std::vector<int64_t>& shape,
                const std::vector<float>& values);
  std::map<std::string, GgufTensor> tensors_;  // by GGUF name
  std::map<std::string, std::vector<uint8_t>> owned_bytes_;
  std::map<std::string, std::vector<int32_t>> input_orders_;  // by GGUF name
  std::set<std::string> quantized_linears_;                   // GGUF names
  int64_t released_values_ = 0;  // of the quantized linears ReleaseQuantizedLinears freed
};

// A Hugging Face tensor name with multimodal wrappers' prefixes reduced to the text model's
// ("model.language_model.X" and "language_model.model.X" → "model.X"), and a bare decoder's
// (Qwen3Model, Gemma3TextModel: "layers.X", "embed_tokens.X", "norm.X") given its "model."
// prefix; empty for vision tensors.
std::string TextModelTensorName(const std::string& hf_name);

// A loaded model directory: its weights, config and tensor source (which must outlive the model
// built from them).
struct HfCheckpoint {
  std::unique_ptr<SafetensorsModel> weights;
  ModelConfig config;
  QuantizationConfig quantization;  // how the weights are quantized (method kNone: they are not)
  std::unique_ptr<HfTensorSource> source;
};
// `hf_overrides` (--hf-overrides, ParseHfOverrides) replace config.json's keys. `quantization` is
// --quantization as given (or empty), checked before any tensor is read: a vLLM method name
// against the checkpoint's quantization_config (ReadQuantizationConfig); a GGUF type name
// (q8_0, q6_k, q4_k: the weight loader re-quantizes unquantized weights to it) is refused for a
// quantized checkpoint, naming its method. Quantized layers are converted on `pool`'s threads
// when given. `config_dir` (--hf-config-path) holds the config.json read instead of `dir`'s.
Expected<HfCheckpoint> OpenHfCheckpoint(
    const std::string& dir, const nlohmann::json& hf_overrides = nlohmann::json::object(),
    const std::string& quantization = "", ThreadPool* pool = nullptr,
    const std::string& config_dir = "");

// Reads a JSON value of config.json into `out` when present and not null (for the architecture
// files); a value of the wrong kind is an error naming `key`.
template <typename T>
Status ReadHfField(const nlohmann::json& config, const char* key, T* out) {
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

}  // namespace vllm
