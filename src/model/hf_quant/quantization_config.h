// A Hugging Face checkpoint's quantization as vLLM reads it: config.json's quantization_config
// (or quantize_config.json beside it, older GPTQ), confirmed or overridden by --quantization.
// Each method's fields are checked here, so a scheme the converters cannot load is an error that
// names the method and the field, never a dtype error later.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"

namespace vllm {

// vLLM's method names: awq (awq_marlin), gptq (gptq_marlin), fp8, compressed-tensors,
// bitsandbytes.
enum class QuantMethod { kNone, kGptq, kAwq, kFp8, kCompressedTensors, kBitsAndBytes };

// AutoGPTQ / GPTQModel: W[o, i] = scales[g(i), o] · (q[i, o] − zero[g(i), o]), g(i) = g_idx[i]
// (i / group_size without desc_act).
struct GptqConfig {
  int bits = 4;                 // 2, 3, 4 or 8
  int64_t group_size = 128;     // -1: one group per row
  bool sym = true;              // zero = 2^(bits-1) for every group
  bool desc_act = false;        // g_idx permutes the input columns
  bool zeros_minus_one = true;  // checkpoint_format "gptq" stores zero − 1; "gptq_v2" the zero
};

// AutoAWQ GEMM: W[o, i] = (q[i, o] − z[g, o]) · s[g, o], g = i / group_size, packed along o.
struct AwqConfig {
  int bits = 4;
  int64_t group_size = 128;
  bool zero_point = true;
  std::string version = "gemm";  // "gemm" or "gemv"
};

// quant_method fp8: F8_E4M3 weights [out, in] times weight_scale (per tensor, or per row) or,
// with weight_block_size, weight_scale_inv per [block rows, block cols] block.
struct Fp8Config {
  std::vector<int64_t> weight_block_size;  // empty, or {rows, cols} of one scale block
  bool dynamic_activations = true;         // activation_scheme "dynamic" (else "static")
  bool quantize_at_load = false;           // --quantization fp8 on an unquantized checkpoint
};

// compressed-tensors' QuantizationArgs of weights or input activations.
struct CtQuantArgs {
  int num_bits = 8;
  std::string type = "int";  // "int" or "float"
  bool symmetric = true;
  std::string strategy = "tensor";       // "tensor", "channel", "group", "block", "token"
  int64_t group_size = 0;                // strategy "group"
  std::vector<int64_t> block_structure;  // strategy "block": {rows, cols}
  bool dynamic = false;
  std::string actorder;  // "", "group" or "weight": weight_g_idx permutes the input columns
};
// One config group: the linear layers it targets ("Linear", module names, or "re:" regexes
// matched against module names) and how they are quantized.
struct CtScheme {
  std::vector<std::string> targets;
  CtQuantArgs weights;
  std::optional<CtQuantArgs> input_activations;
};
struct CompressedTensorsConfig {
  // "int-quantized", "float-quantized", "pack-quantized" or "naive-quantized".
  std::string format;
  std::vector<CtScheme> schemes;
};

// bitsandbytes pre-quantized: 4-bit NF4 / FP4 blocks (with double quantization of absmax), or
// LLM.int8 8-bit rows.
struct BitsAndBytesConfig {
  bool load_in_4bit = false;
  bool load_in_8bit = false;
  std::string quant_type = "nf4";  // "nf4" or "fp4"
  bool double_quant = false;
};

struct QuantizationConfig {
  QuantMethod method = QuantMethod::kNone;
  GptqConfig gptq;
  AwqConfig awq;
  Fp8Config fp8;
  CompressedTensorsConfig compressed_tensors;
  BitsAndBytesConfig bitsandbytes;
  // Modules left unquantized (compressed-tensors' ignore, AWQ's modules_to_not_convert, fp8's
  // ignored_layers, bitsandbytes' llm_int8_skip_modules): module names ("lm_head",
  // "model.layers.0.mlp.down_proj"), name components, or "re:" regexes.
  std::vector<std::string> ignore;

  // Whether `module` (a Hugging Face module name without ".weight") stays unquantized.
  bool Ignores(const std::string& module) const;
  // The compressed-tensors scheme that targets `module`, or nullptr.
  const CtScheme* SchemeFor(const std::string& module) const;
};

// vLLM's method name → method (awq_marlin and gptq_marlin name the same checkpoints as awq and
// gptq here); nullopt for any other name.
std::optional<QuantMethod> ParseQuantMethod(const std::string& name);
// The method's vLLM name ("gptq", "compressed-tensors"); "none" for kNone.
const char* QuantMethodName(QuantMethod method);
// Every name ParseQuantMethod takes, in vLLM's order (for error messages that list them).
const std::vector<std::string>& QuantMethodNames();

// The quantization of model directory `dir` whose config.json is `config`, checked against
// `requested` (--quantization as a vLLM method name; empty when not given). --quantization fp8 on
// an unquantized checkpoint is fp8 with quantize_at_load; any other request that the checkpoint
// does not confirm is an error naming both methods.
Expected<QuantizationConfig> ReadQuantizationConfig(const std::string& dir,
                                                    const nlohmann::json& config,
                                                    const std::string& requested);

}  // namespace vllm
