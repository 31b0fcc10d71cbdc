// The kernel type table (see type_traits.h): one entry per row of common/ggml_type.h's
// kSupportedTypes. The facts every room needs (name, block size and bytes, recipe facts) stay in
// that header-only row, because common cannot see kernels; each entry here embeds its row by
// reference and adds the code. The table has as many entries as kSupportedTypes has rows (an entry
// cannot be left out: its row reference has no default), built at first use, not registered by
// static initializers (the linker drops unreferenced objects of static libraries).
#include <array>

#include "kernels/decode_blocks.h"
#include "kernels/linear_internal.h"
#include "kernels/packed_nibble_layout.h"
#include "kernels/packed_q8_layout.h"
#include "kernels/quantizers.h"
#include "kernels/row_conversions.h"

namespace vllm::kernels {
namespace {

template <GgmlType kType>
void DequantizeRowOf(const void* row, int64_t n, float* out) {
  DequantizeDecodedRow(*FindTypeTraits(kType), row, n, out);
}

TypeTraits FloatType(GgmlType type, ActivationFormat activation,
                     void (*dequantize_row)(const void*, int64_t, float*),
                     void (*quantize_row)(const float*, int64_t, void*), RowsKernel avx2,
                     RowsKernel avx512, PackedForm packed = {}) {
  return TypeTraits{*FindSupportedType(type),
                    0,
                    activation,
                    nullptr,
                    dequantize_row,
                    quantize_row,
                    // ARM's tiers: kNeon, kNeonDotprod, kNeonI8mm.
                    {LinearRowsFloatScalar, avx2, avx512, LinearRowsFloatNeon, LinearRowsFloatNeon,
                     LinearRowsFloatNeon},
                    packed};
}

// An integer type: its decoder gives the dequantizer and the in-place kernels on every ISA.
template <GgmlType kType>
TypeTraits IntegerType(int64_t sub_block_size, void (*decode)(const void*, DecodedBlock*),
                       void (*quantize_row)(const float*, int64_t, void*),
                       RowsKernel avx2 = LinearRowsDecodedAvx2,
                       RowsKernel avx512 = LinearRowsDecodedAvx512, PackedForm packed = {}) {
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
TypeTraits WithQ8KActivations(TypeTraits traits) {
  traits.activation = ActivationFormat::kQ8K;
  return traits;
}

const std::array<TypeTraits, kNumSupportedTypes>& Table() {
  static const std::array<TypeTraits, kNumSupportedTypes> table = {
      FloatType(GgmlType::kF32, ActivationFormat::kF32, DequantizeRowF32, QuantizeRowF32,
                LinearRowsF32Avx2, LinearRowsF32Avx512),
      FloatType(GgmlType::kF16, ActivationFormat::kF32, DequantizeRowF16, QuantizeRowF16,
                LinearRowsF16Avx2, LinearRowsF16Avx512,
                Q8LayoutForm<GgmlType::kF16>(LinearRowsPackedF16Avx512)),
      FloatType(GgmlType::kBF16, ActivationFormat::kBf16, DequantizeRowBf16, QuantizeRowBf16,
                LinearRowsBf16Avx2, LinearRowsBf16Avx512,
                Q8LayoutForm<GgmlType::kBF16>(LinearRowsPackedBf16Avx512)),
      // Q4_0 / Q8_0 in place (only weights whose rows do not fill groups of 16 on AVX-512 CPUs)
      // use the AVX2 kernels on both SIMD paths.
      IntegerType<GgmlType::kQ4_0>(
          32, DecodeQ4_0, QuantizeRowQ4_0, LinearRowsQ4_0Avx2, LinearRowsQ4_0Avx2,
          GridForm<PackedIq4NlRecord>(LinearRowsPackedQ4_0Vbmi, LinearRowsPackedQ4_0Avx512,
                                      {PrepareQ4_0TermsAvx2, LinearRowsPackedQ4_0Avx2})),
      IntegerType<GgmlType::kQ4_1>(
          32, DecodeQ4_1, QuantizeRowQ4_1, LinearRowsDecodedAvx2, LinearRowsDecodedAvx512,
          NibbleForm<PackedQ4_1Record>({PrepareMinTermsAvx512, LinearRowsPackedQ4_1Avx512},
                                       {PrepareMinTermsAvx2, LinearRowsPackedQ4_1Avx2})),
      IntegerType<GgmlType::kQ5_0>(
          32, DecodeQ5_0, QuantizeRowQ5_0, LinearRowsDecodedAvx2, LinearRowsDecodedAvx512,
          NibbleForm<PackedQ5_0Record>({PrepareQ5_0TermsAvx512, LinearRowsPackedQ5_0Avx512},
                                       {PrepareQ5_0TermsAvx2, LinearRowsPackedQ5_0Avx2})),
      IntegerType<GgmlType::kQ5_1>(
          32, DecodeQ5_1, QuantizeRowQ5_1, LinearRowsDecodedAvx2, LinearRowsDecodedAvx512,
          NibbleForm<PackedQ5_1Record>({PrepareMinTermsAvx512, LinearRowsPackedQ5_1Avx512},
                                       {PrepareMinTermsAvx2, LinearRowsPackedQ5_1Avx2})),
      IntegerType<GgmlType::kQ8_0>(
          32, DecodeQ8_0, QuantizeRowQ8_0, LinearRowsQ8_0Avx2, LinearRowsQ8_0Avx2,
          Q8LayoutForm<GgmlType::kQ8_0>(LinearRowsPackedQ8_0Avx512, PrepareQ8_0Biases)),
      WithQ8KActivations(IntegerType<GgmlType::kQ2_K>(
          16, DecodeQ2_K, QuantizeRowQ2_K, LinearRowsDecodedAvx2, LinearRowsDecodedAvx512,
          NibbleForm<PackedQ2_KRecord>({PrepareQ2_KTermsAvx512, LinearRowsPackedQ2_KAvx512},
                                       {PrepareQ2_KTermsAvx2, LinearRowsPackedQ2_KAvx2}))),
      WithQ8KActivations(IntegerType<GgmlType::kQ3_K>(
          16, DecodeQ3_K, QuantizeRowQ3_K, LinearRowsDecodedAvx2, LinearRowsDecodedAvx512,
          NibbleForm<PackedQ3_KRecord>({PrepareQ3_KTermsAvx512, LinearRowsPackedQ3_KAvx512},
                                       {PrepareQ3_KTermsAvx2, LinearRowsPackedQ3_KAvx2}))),
      WithQ8KActivations(IntegerType<GgmlType::kQ4_K>(
          32, DecodeQ4_K, QuantizeRowQ4_K, LinearRowsDecodedAvx2, LinearRowsDecodedAvx512,
          NibbleForm<PackedQ4_KRecord>({PrepareScaleMinTermsAvx512, LinearRowsPackedQ4_KAvx512},
                                       {PrepareScaleMinTermsAvx2, LinearRowsPackedQ4_KAvx2}))),
      WithQ8KActivations(IntegerType<GgmlType::kQ5_K>(
          32, DecodeQ5_K, QuantizeRowQ5_K, LinearRowsDecodedAvx2, LinearRowsDecodedAvx512,
          NibbleForm<PackedQ5_KRecord>({PrepareScaleMinTermsAvx512, LinearRowsPackedQ5_KAvx512},
                                       {PrepareScaleMinTermsAvx2, LinearRowsPackedQ5_KAvx2}))),
      WithQ8KActivations(IntegerType<GgmlType::kQ6_K>(
          16, DecodeQ6_K, QuantizeRowQ6_K, LinearRowsDecodedAvx2, LinearRowsDecodedAvx512,
          NibbleForm<PackedQ6_KRecord>({PrepareQ6_KTermsAvx512, LinearRowsPackedQ6_KAvx512},
                                       {PrepareQ6_KTermsAvx2, LinearRowsPackedQ6_KAvx2}))),
      IntegerType<GgmlType::kIQ4_NL>(
          32, DecodeIq4Nl, QuantizeRowIq4Nl, LinearRowsDecodedAvx2, LinearRowsDecodedAvx512,
          GridForm<PackedIq4NlRecord>(LinearRowsPackedIq4NlVbmi, LinearRowsPackedIq4NlAvx512,
                                      {PrepareGridTermsAvx2, LinearRowsPackedIq4NlAvx2})),
      IntegerType<GgmlType::kIQ4_XS>(
          32, DecodeIq4Xs, QuantizeRowIq4Xs, LinearRowsDecodedAvx2, LinearRowsDecodedAvx512,
          GridForm<PackedIq4XsRecord>(LinearRowsPackedIq4XsVbmi, LinearRowsPackedIq4XsAvx512,
                                      {PrepareGridTermsAvx2, LinearRowsPackedIq4XsAvx2})),
      IntegerType<GgmlType::kMXFP4>(
          32, DecodeMxfp4, QuantizeRowMxfp4, LinearRowsDecodedAvx2, LinearRowsDecodedAvx512,
          GridForm<PackedMxfp4Record>(LinearRowsPackedMxfp4Vbmi, LinearRowsPackedMxfp4Avx512,
                                      {PrepareGridTermsAvx2, LinearRowsPackedMxfp4Avx2})),
      // Zero-point checkpoints' groups (not a ggml type: quant_blocks.h).
      IntegerType<GgmlType::kQ4_Z>(
          32, DecodeQ4_Z, QuantizeRowQ4_Z, LinearRowsDecodedAvx2, LinearRowsDecodedAvx512,
          NibbleForm<PackedQ4_ZRecord>({PrepareZeroPointTermsAvx512, LinearRowsPackedQ4_ZAvx512},
                                       {PrepareZeroPointTermsAvx2, LinearRowsPackedQ4_ZAvx2})),
  };
  return table;
}

}  // namespace

Isa PackedIsa(const PackedForm& form) {
  const Isa best = BestIsa();
  return form.kernels[static_cast<int>(best)].rows != nullptr ? best : Isa::kScalar;
}

const TypeTraits* FindTypeTraits(GgmlType type) {
  for (const TypeTraits& traits : Table()) {
    if (traits.layout.type == type) return &traits;
  }
  return nullptr;
}

}  // namespace vllm::kernels
