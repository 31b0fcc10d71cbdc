// Tensor element types as numbered by GGUF/ggml, with the byte layout of each type this project
// reads (values per block, bytes per block). The block structs themselves, and everything that
// computes with them, live in kernels/ (quant_blocks.h, type_traits.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace vllm {

enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ4_NL = 20,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kBF16 = 30,
  kMXFP4 = 39,
};

// Values per block of the legacy quants (Q4_0 ... Q8_0, IQ4_NL, MXFP4) and per sub-block of the
// K-quants' activations.
constexpr int kQuantBlockSize = 32;
// Values per super-block of the K-quants and IQ4_XS.
constexpr int kSuperBlockSize = 256;

// The layout of a type this project can compute with: values per block and bytes per block.
struct GgmlTypeTraits {
  const char* name;     // as llama.cpp prints it: "q4_K", "iq4_xs", "bf16"
  int64_t block_size;   // values per block (1 for plain types)
  int64_t block_bytes;  // bytes per block
};

// Layouts of the supported types: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K,
// Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4; nullopt for every other type.
std::optional<GgmlTypeTraits> GetSupportedTypeTraits(GgmlType type);

// The supported types' names, comma-separated, for error messages.
const std::string& SupportedTypeNames();

// A printable name for any type id, supported or not ("q4_K", "iq2_xxs", "type 77").
std::string GgmlTypeName(uint32_t type);

// Parses a supported type's name (case-insensitive: "q4_k", "Q4_K", "bf16", "mxfp4").
std::optional<GgmlType> ParseGgmlType(const std::string& name);

// Bytes of one row of `num_values` values; num_values must be a multiple of the block size.
inline int64_t RowBytes(const GgmlTypeTraits& traits, int64_t num_values) {
  return num_values / traits.block_size * traits.block_bytes;
}

}  // namespace vllm
