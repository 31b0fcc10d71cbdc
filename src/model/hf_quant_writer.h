// Quantizers that write linear layers as the quantized Hugging Face checkpoints people download
// (AutoGPTQ, AutoAWQ, AutoFP8 / DeepSeek FP8, llm-compressor's compressed-tensors, bitsandbytes
// as transformers saves it), each following its tool's published packing, with the exact values
// the stored tensors mean. make-random-model --quantization writes its checkpoints with them, for
// tests and benchmarks; the rounding is round-to-nearest per group (not GPTQ's or AWQ's search):
// the checkpoints test loaders, not accuracy.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/ggml_type.h"

namespace vllm {

enum class HfQuantFormat {
  kGptq,      // AutoGPTQ, checkpoint_format gptq: qweight, qzeros (zero − 1), scales f16, g_idx
  kGptqAct,   // the same with desc_act: g_idx follows a random column permutation
  kGptqV2,    // GPTQModel, checkpoint_format gptq_v2: the same tensors, qzeros hold the zero
  kAwq,       // AutoAWQ GEMM: qweight [in, out/8] in AWQ's interleaved order, qzeros, scales f16
  kAwqGemv,   // AutoAWQ GEMV: qweight [out, in/8] in order, qzeros and scales padded per row
  kFp8,       // quant_method fp8: F8_E4M3 weight, f32 per-tensor weight_scale
  kFp8Block,  // quant_method fp8 with weight_block_size [128, 128]: weight_scale_inv per block
  kW8A8,      // compressed-tensors int-quantized: int8 weight, bf16 weight_scale [out, 1]
  kW4A16,     // compressed-tensors pack-quantized: weight_packed, weight_scale, weight_shape
  kCtFp8,     // compressed-tensors float-quantized (FP8_DYNAMIC): e4m3, bf16 weight_scale [out, 1]
  kCtFp8Tensor,  // the same with one bf16 weight_scale [1] per tensor
  kBnbNf4,       // bitsandbytes NF4 (blocks of 64) with double quantization of absmax
  kBnbFp4,       // bitsandbytes FP4 (e2m1 levels over 12), blocks and double quantization as NF4
  kBnbInt8,      // bitsandbytes LLM.int8: int8 weight, f32 SCB (row absmax)
};

struct HfQuantWriterOptions {
  HfQuantFormat format = HfQuantFormat::kGptq;
  int bits = 4;              // GPTQ: 2, 3, 4 or 8; W4A16 (pack-quantized): 4 or 8; others fixed
  int64_t group_size = 128;  // GPTQ, AWQ, W4A16: values per scale along a row; -1: a whole row
  bool symmetric = true;     // GPTQ, W4A16; false: per-group zero points (AWQ always has them)
  uint64_t seed = 0;         // gptq-act's column permutations
  std::string torch_dtype = "bfloat16";  // bitsandbytes' quant_state and compute dtype
};

// "gptq|gptq-act|gptq-v2|awq|awq-gemv|fp8|fp8-block|w8a8|w4a16|ct-fp8|ct-fp8-tensor|bnb-nf4|
// bnb-fp4|bnb-int8".
const char* HfQuantFormatNames();

// Options for format `name` with each format's defaults (gptq, gptq-v2: 4 bits, group 128, sym;
// gptq-act: 4 bits, group 64, asym; awq, awq-gemv: group 128; w4a16: 4 bits, group 128, sym).
// `bits` and `group_size` 0 and `asym` false keep the defaults; a value the format does not take
// is an error naming the option.
Expected<HfQuantWriterOptions> MakeHfQuantWriterOptions(const std::string& name, int bits,
                                                        int64_t group_size, bool asym,
                                                        uint64_t seed);

// Whether Hugging Face tensor `name` of `rank` dimensions is one the writer quantizes: the 2-D
// weight of a decoder layer's attention or MLP projection or of an expert
// ("model.layers.3.self_attn.q_proj.weight", "model.layers.0.mlp.experts.5.down_proj.weight",
// Mixtral's "block_sparse_moe.experts.E.w1.weight"); never embeddings, lm_head, norms or routers.
bool IsQuantizedHfLinear(const std::string& name, size_t rank);

// One stored tensor of a quantized layer.
struct WrittenTensor {
  std::string name;   // "<module>.qweight"
  GgmlType type;      // kI8 for the byte dtypes
  std::string dtype;  // safetensors dtype name: "I32", "F16", "U8", "F8_E4M3", ...
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

struct QuantizedHfLinear {
  std::vector<WrittenTensor> tensors;  // the layer's tensors as its tool names and lays them out
  std::vector<float> dequantized;      // [rows, cols]: exactly the values the tensors stand for
};

// Linear layer `module` ("model.layers.0.mlp.up_proj") with f32 weight [rows (out), cols (in)],
// row-major, in `options.format`. Shapes the format cannot hold (cols not a multiple of the group
// size, rows not a multiple of the packing) are errors naming the module.
Expected<QuantizedHfLinear> QuantizeHfLinear(const HfQuantWriterOptions& options,
                                             const std::string& module, const float* weight,
                                             int64_t rows, int64_t cols);

// config.json's "quantization_config" as the format's tool writes it.
nlohmann::json HfQuantizationConfigJson(const HfQuantWriterOptions& options);

// llm-compressor's compressed-tensors "quantization_config" of `format` ("int-quantized",
// "pack-quantized", ...) with one config group of Linear layers (`weights`, `input_activations`:
// QuantizationArgs or null), lm_head ignored.
nlohmann::json CompressedTensorsConfigJson(const std::string& format, nlohmann::json weights,
                                           nlohmann::json input_activations);

}  // namespace vllm
