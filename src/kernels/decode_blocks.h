// Per-type block decoders: one block of an integer type → DecodedBlock (int8 values, sub-block
// scales and mins in f32), the form every integer dot product and the dequantizer start from.
#pragma once

#include "kernels/type_traits.h"

namespace vllm::kernels {

void DecodeQ4_0(const void* block, DecodedBlock* out);
void DecodeQ4_1(const void* block, DecodedBlock* out);
void DecodeQ4_Z(const void* block, DecodedBlock* out);
void DecodeQ5_0(const void* block, DecodedBlock* out);
void DecodeQ5_1(const void* block, DecodedBlock* out);
void DecodeQ8_0(const void* block, DecodedBlock* out);
void DecodeQ2_K(const void* block, DecodedBlock* out);
void DecodeQ3_K(const void* block, DecodedBlock* out);
void DecodeQ4_K(const void* block, DecodedBlock* out);
void DecodeQ5_K(const void* block, DecodedBlock* out);
void DecodeQ6_K(const void* block, DecodedBlock* out);
void DecodeIq4Nl(const void* block, DecodedBlock* out);
void DecodeIq4Xs(const void* block, DecodedBlock* out);
void DecodeMxfp4(const void* block, DecodedBlock* out);

// Values of one row of an integer type: n / traits.layout.block_size blocks decoded in turn,
// element = scale * q - min in f32 (bit-identical to ggml's dequantize_row_*).
void DequantizeDecodedRow(const TypeTraits& traits, const void* row, int64_t n, float* out);

}  // namespace vllm::kernels
