// Internal to kernels: what a type's file in types/ builds its TypeTraits entry from (see
// type_traits.h). A float type names its row conversions, its in-place kernels being every path's
// float ones (FloatType); an integer type its decoder, which gives its dequantizer and its in-place
// kernels on every ISA (IntegerType), plus its quantizer and packed form. Each types/<type>.cc
// defines `TypeTraits <Type>Entry()`, which type_table.cc lists.
#pragma once

#include "kernels/linear_internal.h"
#include "kernels/type_traits.h"

namespace vllm::kernels {

// Values of one row of an integer type: n / traits.layout.block_size blocks decoded in turn,
// element = scale * q - min in f32 (bit-identical to ggml's dequantize_row_*).
inline void DequantizeDecodedRow(const TypeTraits& traits, const void* row, int64_t n, float* out) {
  const int64_t block_size = traits.layout.block_size;
  const int64_t sub_size = traits.sub_block_size;
  const auto* bytes = static_cast<const uint8_t*>(row);
  DecodedBlock decoded;
  for (int64_t b = 0; b < n / block_size; ++b) {
    traits.decode(bytes + b * traits.layout.block_bytes, &decoded);
    float* values = out + b * block_size;
    for (int64_t i = 0; i < block_size; ++i) {
      const int64_t s = i / sub_size;
      // scale * q is exact for every type with a min, and min is ±0 for the others, so fused or
      // not this rounds as ggml's dequantizer does, bit for bit (signed zeros included).
      values[i] = decoded.scale[s] * static_cast<float>(decoded.q[i]) - decoded.min[s];
    }
  }
}

template <GgmlType kType>
void DequantizeRowOf(const void* row, int64_t n, float* out) {
  DequantizeDecodedRow(*FindTypeTraits(kType), row, n, out);
}

inline TypeTraits FloatType(GgmlType type, ActivationFormat activation,
                            void (*dequantize_row)(const void*, int64_t, float*),
                            void (*quantize_row)(const float*, int64_t, void*),
                            PackedForm packed = {}) {
  return TypeTraits{*FindSupportedType(type),
                    0,
                    activation,
                    nullptr,
                    dequantize_row,
                    quantize_row,
                    // ARM's tiers: kNeon, kNeonDotprod, kNeonI8mm.
                    {LinearRowsFloatScalar, LinearRowsFloatAvx2, LinearRowsFloatAvx512,
                     LinearRowsFloatNeon, LinearRowsFloatNeon, LinearRowsFloatNeon},
                    packed};
}

// An integer type: its decoder gives the dequantizer and the in-place kernels on every ISA.
template <GgmlType kType>
TypeTraits IntegerType(int64_t sub_block_size, void (*decode)(const void*, DecodedBlock*),
                       void (*quantize_row)(const float*, int64_t, void*), PackedForm packed = {},
                       RowsKernel avx2 = LinearRowsDecodedAvx2,
                       RowsKernel avx512 = LinearRowsDecodedAvx512) {
  return TypeTraits{*FindSupportedType(kType),
                    sub_block_size,
                    ActivationFormat::kQ8,
                    decode,
                    DequantizeRowOf<kType>,
                    quantize_row,
                    // ARM's tiers: kNeon, kNeonDotprod, kNeonI8mm (SDOT; no SMMLA kernel yet).
                    {LinearRowsDecodedScalar, avx2, avx512, LinearRowsDecodedNeon,
                     LinearRowsDecodedDotprod, LinearRowsDecodedDotprod},
                    packed};
}

// K-quant weights take x with one scale per super-block, as llama.cpp's K-quant dot products do.
inline TypeTraits WithQ8KActivations(TypeTraits traits) {
  traits.activation = ActivationFormat::kQ8K;
  return traits;
}

}  // namespace vllm::kernels
