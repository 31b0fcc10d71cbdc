// The linear layers of a quantized Hugging Face checkpoint, converted at load into the kernel
// type table's types so they run at the speed of the GGUF type of the same bits:
//   ≤ 4-bit integer groups (GPTQ, AWQ, compressed-tensors pack-quantized), when every q − zero
//     fits [-8, 7]: Q4_0 (exact: d = scale, nibble = q − zero + 8); otherwise Q4_Z (exact: d =
//     scale, z = zero, nibble = q; zeros 0 to 31), or for other zeros Q4_1 (d = scale, m = −scale ·
//     zero rounded to f16);
//   8-bit integers (GPTQ 8-bit, compressed-tensors int8): Q8_0 when every q − zero fits int8
//     (exact), otherwise F16;
//   FP8 (e4m3 times its scales): F8_E4M3_B32 (exact: the codes, each 32 with their scale) when
//     every 32 values of a row share a scale, otherwise BF16;
//   bitsandbytes NF4 / FP4 / int8: Q8_0.
// Scales are f16 in these types: f16 and bf16 scales convert exactly unless tiny (subnormal).
// A group size that is not a multiple of 32 loads as F16.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/thread_pool.h"
#include "formats/safetensors_index.h"
#include "model/architecture.h"
#include "model/hf_quant/quantization_config.h"

namespace vllm {

// The stored tensors of one quantized linear layer.
struct QuantizedLinearTensors {
  std::string module;  // "model.layers.0.self_attn.q_proj"
  // By suffix after "<module>.": "qweight", "qzeros", "scales", "g_idx", "weight",
  // "weight_scale", "weight_packed", "weight.absmax", ...
  std::map<std::string, const SafetensorsTensor*> parts;
};

// One linear layer as the kernels take it.
struct ConvertedLinear {
  // name "<module>.weight", a kernel type, ggml shape {cols (in), rows (out)}, its rows' bytes.
  OwnedTensor weight;
  // Empty, or the input permutation (desc_act / actorder): the layer computes
  // y = W' · x' with x'[j] = x[input_order[j]] ([cols] values, a permutation of 0 .. cols − 1).
  std::vector<int32_t> input_order;
};

// The checkpoint's quantized linear layers, grouped by module: every tensor that belongs to a
// quantized layer of `config`'s method (modules that config.Ignores stay out).
Expected<std::vector<QuantizedLinearTensors>> FindQuantizedLinears(
    const SafetensorsModel& weights, const QuantizationConfig& config);

// One layer converted (dispatches on config.method). Errors name the tensor and say what is wrong
// (a shape that does not fit the group size, g_idx out of range, scales of the wrong shape).
// With a `pool`, the layer's rows are converted on its threads: the same bytes, sooner, with one
// layer's scratch alive as without.
Expected<ConvertedLinear> ConvertQuantizedLinear(const QuantizationConfig& config,
                                                 const QuantizedLinearTensors& tensors,
                                                 ThreadPool* pool = nullptr);

// Per method, for ConvertQuantizedLinear (one file each).
Expected<ConvertedLinear> ConvertGptqLinear(const GptqConfig& config,
                                            const QuantizedLinearTensors& tensors,
                                            ThreadPool* pool = nullptr);
Expected<ConvertedLinear> ConvertAwqLinear(const AwqConfig& config,
                                           const QuantizedLinearTensors& tensors,
                                           ThreadPool* pool = nullptr);
Expected<ConvertedLinear> ConvertFp8Linear(const Fp8Config& config,
                                           const QuantizedLinearTensors& tensors,
                                           ThreadPool* pool = nullptr);
Expected<ConvertedLinear> ConvertCompressedTensorsLinear(const CtScheme& scheme,
                                                         const std::string& format,
                                                         const QuantizedLinearTensors& tensors,
                                                         ThreadPool* pool = nullptr);
Expected<ConvertedLinear> ConvertBitsAndBytesLinear(const BitsAndBytesConfig& config,
                                                    const QuantizedLinearTensors& tensors,
                                                    ThreadPool* pool = nullptr);

}  // namespace vllm
