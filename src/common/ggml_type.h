// Tensor element types as numbered by GGUF/ggml, with their block layouts.
//
// Quantized types store a row as consecutive blocks of kQuantBlockSize (32) values:
//   Q8_0 block (34 bytes): fp16 scale d, int8 q[32];         value = d * q[i]
//   Q4_0 block (18 bytes): fp16 scale d, uint8 nibbles[16];  value = d * (nibble - 8), where
//                          byte j holds element j in its low nibble and element j + 16 in its high.
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
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kBF16 = 30,
};

constexpr int kQuantBlockSize = 32;

struct BlockQ8_0 {
  uint16_t d;  // fp16 scale
  int8_t qs[kQuantBlockSize];
};
static_assert(sizeof(BlockQ8_0) == 34);

struct BlockQ4_0 {
  uint16_t d;  // fp16 scale
  uint8_t qs[kQuantBlockSize / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

// The layout of a type this project can compute with: values per block and bytes per block.
struct GgmlTypeTraits {
  const char* name;
  int64_t block_size;   // values per block (1 for plain types)
  int64_t block_bytes;  // bytes per block
};

// Traits for supported types (F32, F16, BF16, Q8_0, Q4_0); nullopt for every other type.
std::optional<GgmlTypeTraits> GetSupportedTypeTraits(GgmlType type);

// A printable name for any type id, supported or not ("q4_K", "type 77").
std::string GgmlTypeName(uint32_t type);

// Parses "f32", "f16", "bf16", "q8_0", "q4_0" (case-insensitive).
std::optional<GgmlType> ParseGgmlType(const std::string& name);

// Bytes of one row of `num_values` values; num_values must be a multiple of the block size.
inline int64_t RowBytes(const GgmlTypeTraits& traits, int64_t num_values) {
  return num_values / traits.block_size * traits.block_bytes;
}

}  // namespace vllm
