// One model family as one descriptor: how its hyper-parameters are read from GGUF metadata and
// from a Hugging Face config.json, the Hugging Face names of its tensors, and its factory. Each
// arch/<family>.cc defines the descriptors of its family and registry.cc lists them.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/expected.h"
#include "formats/gguf_file.h"
#include "formats/safetensors_index.h"
#include "model/model.h"
#include "model/tensor_source.h"

namespace vllm {

// A Hugging Face tensor name and llama.cpp's name for it, as patterns where "{L}" stands for a
// layer index and "{E}" for an expert index: {"model.layers.{L}.mlp.experts.{E}.w1.weight",
// "blk.{L}.ffn_gate.{E}.weight"}.
struct TensorNamePair {
  std::string hf;
  std::string gguf;
};

// What reading a config.json may add besides the ModelConfig: f32 vectors that the architecture
// reads as tensors (e.g. rope_freqs.weight, rope_factors_long.weight), by GGUF name.
struct HfDerivedTensors {
  std::map<std::string, std::vector<float>> tensors;
};

// A tensor built by conversion, owning its bytes. Shapes are in ggml order for GGUF-side tensors
// and in PyTorch order for Hugging Face-side ones.
struct OwnedTensor {
  std::string name;
  GgmlType type = GgmlType::kF32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

class RandomModelPlan;

using ModelFactory = Expected<std::unique_ptr<Model>> (*)(const TensorSource& source,
                                                          const ModelConfig& config,
                                                          const ModelLoadOptions& options);

struct Architecture {
  std::string name;                   // general.architecture of its GGUF files
  std::vector<std::string> hf_names;  // config.json "architectures" entries that load as it
  // transformers' model_type for hf_names.front(), written by the exporter; empty: `name`.
  std::string hf_model_type;
  RopeStyle gguf_rope_style = RopeStyle::kNeox;
  // The family's own keys, read after the common ones (nullptr: none). GGUF keys are
  // "<name>.<key>"; `text_config` is config.json's text part (the whole file for text models).
  Status (*read_gguf)(const GgufFile& file, ModelConfig* config) = nullptr;
  Status (*read_hf)(const nlohmann::json& text_config, ModelConfig* config,
                    HfDerivedTensors* derived) = nullptr;
  // The inverse of read_hf for a model written from a GGUF file (tests and benchmarks): adds the
  // family's keys to a config.json holding the common ones.
  Status (*write_hf)(const GgufFile& file, const ModelConfig& config,
                     nlohmann::json* config_json) = nullptr;
  std::vector<TensorNamePair> hf_tensors;
  // Gemma: Hugging Face stores RMSNorm weights w of a norm that scales by 1 + w; GGUF files store
  // 1 + w. Tensors named "*norm.weight" are converted on the way in and out.
  bool hf_norms_offset_by_one = false;
  // Hugging Face tensors that become GGUF tensors only by conversion (gpt-oss's fused,
  // interleaved expert tensors): appends to `out` the GGUF tensors made from `tensor` (reading
  // the other tensors it needs from `weights`); false when it does not know the tensor either.
  // nullptr: the name table is all.
  Expected<bool> (*convert_hf_tensor)(const SafetensorsModel& weights,
                                      const SafetensorsTensor& tensor,
                                      std::vector<OwnedTensor>* out) = nullptr;
  // The inverse for export: appends the Hugging Face tensors made from `tensor` (other GGUF
  // tensors read from `file`); false when the name table should handle it.
  Expected<bool> (*export_hf_tensor)(const GgufFile& file, const GgufTensor& tensor,
                                     std::vector<OwnedTensor>* out) = nullptr;
  ModelFactory create = nullptr;
  // make-random-model: adds the family's GGUF keys beyond the common ones and every layer's
  // tensors (the embeddings, final norm and head are common) for plan->shape().
  void (*plan_random_model)(RandomModelPlan* plan) = nullptr;
};

// The registered architectures (registry.cc).
const std::vector<const Architecture*>& Architectures();
// By GGUF general.architecture / by a config.json architectures entry; nullptr when unsupported.
const Architecture* FindArchitecture(const std::string& name);
const Architecture* FindHfArchitecture(const std::string& hf_name);
// "a, b, c": the supported GGUF (or Hugging Face) architecture names, for error messages.
std::string SupportedArchitectureNames(bool hf);

// Fills a name pattern: "{L}" → layer, "{E}" → expert.
std::string FormatTensorName(const std::string& pattern, int64_t layer, int64_t expert = -1);
// Whether `name` matches `pattern` (each placeholder one or more decimal digits); captures the
// indices of the placeholders it has.
bool MatchTensorName(const std::string& pattern, const std::string& name, int64_t* layer,
                     int64_t* expert);
// `name` in the other naming of `pairs` (to_gguf: HF → GGUF, else GGUF → HF); empty when none.
std::string TranslateTensorName(const std::vector<TensorNamePair>& pairs, const std::string& name,
                                bool to_gguf);

// Llama's Hugging Face tensor names (embeddings, attention with optional biases and Q/K norms,
// SwiGLU MLP, final norm and head): the base other families extend.
std::vector<TensorNamePair> LlamaHfTensorNames();
// The same with the norm after attention named as llama.cpp's Gemma and gpt-oss files name it
// (post_attention_norm, not ffn_norm).
std::vector<TensorNamePair> LlamaHfTensorNamesWithPostAttentionNorm();

}  // namespace vllm
