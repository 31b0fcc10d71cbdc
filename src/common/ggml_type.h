// Tensor element types as numbered by GGUF/ggml, with the facts of each type this project reads
// (values and bytes per block, llama.cpp's file type and row fallback). The block structs
// themselves, and everything that computes with them, live in kernels/ (quant_blocks.h,
// type_traits.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
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
  // Not a ggml type (no ggml build reads it): 4-bit codes with an integer zero point per 32 values,
  // d (q − z), the exact form of zero-point checkpoints (AWQ, asymmetric GPTQ) as they load.
  kQ4_Z = 1024,
  // Not a ggml type: 32 FP8 e4m3fn bytes with one f32 scale, d · e4m3(q), the exact form of FP8
  // checkpoints (per-tensor, per-channel and 128 × 128 block scales) as they load.
  kF8_E4M3_B32 = 1025,
};

// Values per block of the legacy quants (Q4_0 ... Q8_0, IQ4_NL, MXFP4) and per sub-block of the
// K-quants' activations.
constexpr int kQuantBlockSize = 32;
// Values per super-block of the K-quants and IQ4_XS.
constexpr int kSuperBlockSize = 256;

// The facts of one type this project can compute with, read by every room: the GGUF reader checks
// tensor sizes with them, the model's quant recipe picks types and file types by them, and the
// kernel type table (kernels/type_traits.h) embeds each row by reference beside the code that
// computes with the type. The facts live here, header-only and constexpr, because common is below
// every room (it cannot see kernels); the kernel table has exactly one entry per row (its size is
// this table's, and an entry finds its row by type), so a new type is a row here, its file in
// kernels/types/ with a line in kernels/type_table.cc, and its kernels' own files
// (kernels/type_traits.h lists them).
struct GgmlTypeTraits {
  GgmlType type;
  const char* name;     // as llama.cpp prints it: "q4_K", "iq4_xs", "bf16"
  int64_t block_size;   // values per block (1 for plain types)
  int64_t block_bytes;  // bytes per block
  // llama.cpp's general.file_type (LLAMA_FTYPE_*) for a file mostly of this type (a single K type
  // as its _S mix).
  uint32_t file_type;
  // What llama.cpp's quantizer writes instead where a row is not a multiple of block_size; none:
  // the type itself.
  std::optional<GgmlType> row_fallback = std::nullopt;
  // A type of ours, not ggml's (a GGUF file of it would open in this build only): what a quant
  // recipe answers when asked to write it. nullptr for ggml's types.
  const char* not_in_gguf = nullptr;
};

// Block sizes and bytes as ggml defines them (ggml-common.h's block structs).
inline constexpr GgmlTypeTraits kSupportedTypes[] = {
    {GgmlType::kF32, "f32", 1, 4, 0},
    {GgmlType::kF16, "f16", 1, 2, 1},
    {GgmlType::kBF16, "bf16", 1, 2, 32},
    {GgmlType::kQ4_0, "q4_0", kQuantBlockSize, 18, 2},
    {GgmlType::kQ4_1, "q4_1", kQuantBlockSize, 20, 3},
    {GgmlType::kQ5_0, "q5_0", kQuantBlockSize, 22, 8},
    {GgmlType::kQ5_1, "q5_1", kQuantBlockSize, 24, 9},
    {GgmlType::kQ8_0, "q8_0", kQuantBlockSize, 34, 7},
    {GgmlType::kQ2_K, "q2_K", kSuperBlockSize, 84, 10, GgmlType::kIQ4_NL},
    {GgmlType::kQ3_K, "q3_K", kSuperBlockSize, 110, 11, GgmlType::kIQ4_NL},
    {GgmlType::kQ4_K, "q4_K", kSuperBlockSize, 144, 14, GgmlType::kQ5_0},
    {GgmlType::kQ5_K, "q5_K", kSuperBlockSize, 176, 16, GgmlType::kQ5_1},
    {GgmlType::kQ6_K, "q6_K", kSuperBlockSize, 210, 18, GgmlType::kQ8_0},
    {GgmlType::kIQ4_NL, "iq4_nl", kQuantBlockSize, 18, 25},
    {GgmlType::kIQ4_XS, "iq4_xs", kSuperBlockSize, 136, 30, GgmlType::kIQ4_NL},
    {GgmlType::kMXFP4, "mxfp4", kQuantBlockSize, 17, 38},
    // No llama.cpp file type: 1024 is its LLAMA_FTYPE_GUESSED.
    {GgmlType::kQ4_Z, "q4_z", kQuantBlockSize, 20, 1024, std::nullopt,
     "the load-time form of zero-point checkpoints, not a GGUF type: write q4_1 or q4_0"},
    {GgmlType::kF8_E4M3_B32, "f8_e4m3_b32", kQuantBlockSize, 36, 1024, std::nullopt,
     "the load-time form of FP8 checkpoints, not a GGUF type: write q8_0 or bf16"},
};
inline constexpr size_t kNumSupportedTypes = std::size(kSupportedTypes);

// The row of a supported type; nullptr for any other type.
constexpr const GgmlTypeTraits* FindSupportedType(GgmlType type) {
  for (const GgmlTypeTraits& traits : kSupportedTypes) {
    if (traits.type == type) return &traits;
  }
  return nullptr;
}

// The row of a supported type (kSupportedTypes) as a value; nullopt for every other type.
inline std::optional<GgmlTypeTraits> GetSupportedTypeTraits(GgmlType type) {
  const GgmlTypeTraits* traits = FindSupportedType(type);
  if (traits == nullptr) return std::nullopt;
  return *traits;
}

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
