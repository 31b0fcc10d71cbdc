// The input of the quantized-checkpoint converters' fuzzer (converter_fuzzer.cc) and of its seeds
// (write_seeds.cc): one linear layer's stored tensors and the config.json that says how they are
// quantized, in a form that any mutation still decodes to a layer:
//
//   byte 0       --quantization: index into kFuzzedRequests (modulo its size)
//   config.json  its text, up to a NUL byte
//   tensors      to the end of the input, each: its name after "<kFuzzedModule>." up to a NUL
//                byte (bytes outside printable ASCII read as '_'); its dtype, an index into
//                kFuzzedDtypes (modulo its size); its rank (modulo 4); each dimension, 2 bytes
//                little-endian; then its data, the input's next bytes (zeros once it ends).
//
// A name given twice keeps its first tensor; a truncated record ends the list.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "model/hf_quant_writer.h"

namespace vllm {

inline constexpr const char* kFuzzedModule = "model.layers.0.mlp.down_proj";
inline constexpr const char* kFuzzedRequests[] = {
    "",    "gptq", "gptq_marlin", "awq", "awq_marlin", "fp8", "compressed-tensors", "bitsandbytes",
    "int4"};
inline constexpr const char* kFuzzedDtypes[] = {"F32",     "F16", "BF16", "U8",  "I8", "F8_E4M3",
                                                "F8_E5M2", "I16", "I32",  "I64", "F64"};
// Bounds the tensors' data (zeros included), so that each input converts in bounded memory.
inline constexpr int64_t kMaxFuzzedLayerBytes = int64_t{1} << 20;

struct FuzzedLayer {
  std::string requested;             // --quantization, "" for none
  std::string config_json;           // config.json's text
  std::vector<uint8_t> safetensors;  // the layer's tensors as a safetensors file
};

// The layer `data` describes; nullopt when its tensors' data exceed kMaxFuzzedLayerBytes.
std::optional<FuzzedLayer> DecodeFuzzedLayer(const uint8_t* data, size_t size);

// The input that describes a writer's layer: `request` indexes kFuzzedRequests; `tensors` must be
// named "<kFuzzedModule>.<suffix>", of kFuzzedDtypes, rank ≤ 3, with dimensions below 2^16.
Expected<std::vector<uint8_t>> EncodeFuzzedLayer(size_t request, const std::string& config_json,
                                                 const std::vector<WrittenTensor>& tensors);

}  // namespace vllm
