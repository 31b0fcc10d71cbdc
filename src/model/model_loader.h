// The one way models are opened: a GGUF file or a Hugging Face model directory (config.json +
// safetensors) becomes a Model, together with the file or checkpoint its weights live in. The
// CLI, the engine and the benchmarks all load through it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/expected.h"
#include "formats/gguf_file.h"
#include "model/hf_checkpoint.h"
#include "model/model.h"

namespace vllm {

struct LoadedModel {
  std::unique_ptr<GgufFile> gguf;          // a GGUF model's file (weights used in place), or
  std::optional<HfCheckpoint> checkpoint;  // a model directory's weights and tensor source
  std::unique_ptr<Model> model;            // built on the two above; declared last, freed first
  bool is_directory() const { return checkpoint.has_value(); }
};

// Loads `path`: a directory as a Hugging Face model directory, anything else as a GGUF file,
// with vLLM's --hf-overrides (ParseHfOverrides) applied. `quantization` is --quantization as
// given: a vLLM method name (gptq, awq_marlin, fp8, ...) must match the directory's
// quantization_config (fp8 also quantizes an unquantized one at load) and is refused for a GGUF
// file, whose tensors carry their own types; a GGUF type name is options.linear_type's business
// (LinearTypeFor), refused for a quantized checkpoint. A quantized checkpoint's layers keep the
// types they are converted to whatever options.linear_type (vLLM's --dtype sets only activations'
// and unquantized weights' dtype); its other linear weights (lm_head, ignored modules) follow it.
// Errors name the path.
Expected<LoadedModel> LoadModelFromPath(
    const std::string& path, const ModelLoadOptions& options,
    const nlohmann::json& hf_overrides = nlohmann::json::object(),
    const std::string& quantization = "");

// vLLM's --dtype (auto, float32/float, bfloat16, float16/half) and --quantization (q8_0, q6_k,
// q4_k; empty: none) → the type linear weights are converted to at load (nullopt: as stored).
// --quantization may also be a vLLM method name (awq, gptq, fp8, ...), which names how a
// checkpoint is quantized and sets no linear type: --dtype decides as without it, for the weights
// the checkpoint does not quantize (LoadModelFromPath).
Expected<std::optional<GgmlType>> LinearTypeFor(const std::string& dtype,
                                                const std::string& quantization);

}  // namespace vllm
