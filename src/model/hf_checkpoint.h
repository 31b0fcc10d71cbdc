// Hugging Face model directories: config.json → ModelConfig, and the safetensors weights seen
// through llama.cpp's tensor names (HfTensorSource), so the architectures load them as they load
// GGUF files. Supported: Llama, Mistral, Qwen2 and Qwen3 models with F32 / F16 / BF16 weights.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/expected.h"
#include "formats/safetensors_index.h"
#include "model/model_config.h"
#include "model/tensor_source.h"

namespace vllm {

// The Hugging Face name of a tensor llama.cpp names `gguf_name`; empty when it has none.
std::string HfTensorName(const std::string& gguf_name);

// The architectures of config.json "architectures" that load (LlamaForCausalLM,
// MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM).
std::vector<std::string> SupportedHfArchitectures();
// The config.json name of an architecture this project names `architecture` ("llama" →
// "LlamaForCausalLM"); empty when none.
std::string HfArchitectureName(const std::string& architecture);

// config.json → ModelConfig (rope_style kNeox: Hugging Face keeps Q/K unpermuted). Rope scaling
// "linear" and "llama3" are supported; llama3's per-frequency divisors go to `rope_freq_factors`.
Expected<ModelConfig> ModelConfigFromHfConfig(const nlohmann::json& config,
                                              std::vector<float>* rope_freq_factors);

// A model directory's safetensors tensors under their GGUF names, shapes in ggml order.
class HfTensorSource : public TensorSource {
 public:
  // Maps every tensor of `weights`; an unknown tensor name is an error that lists the known ones.
  // `rope_freq_factors` (may be empty) becomes rope_freqs.weight.
  static Expected<std::unique_ptr<HfTensorSource>> Create(const SafetensorsModel& weights,
                                                          std::vector<float> rope_freq_factors);
  const GgufTensor* Find(const std::string& gguf_name) const override;

 private:
  HfTensorSource() = default;
  std::map<std::string, GgufTensor> tensors_;  // by GGUF name
  std::vector<float> rope_freq_factors_;
};

// A loaded model directory: its weights, config and tensor source (which must outlive the model
// built from them).
struct HfCheckpoint {
  std::unique_ptr<SafetensorsModel> weights;
  ModelConfig config;
  std::unique_ptr<HfTensorSource> source;
};
Expected<HfCheckpoint> OpenHfCheckpoint(const std::string& dir);

}  // namespace vllm
