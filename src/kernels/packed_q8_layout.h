// Internal: the packed layout of Q8_0 / BF16 / F16 weights for AVX-512 (described in
// pack_quantized.cc), shared by the packer and the kernels.
#pragma once

#include <cstdint>

#include "kernels/linear_internal.h"

namespace vllm::kernels {

constexpr int64_t kPackedRowsPerGroup = 16;

// Whether the type's packed form holds float values (no scales): BF16 and F16.
constexpr bool IsPackedFloat(GgmlType type) {
  return type == GgmlType::kBF16 || type == GgmlType::kF16;
}
// Bytes of packed quants per group of 16 rows and block of 32 columns.
constexpr int64_t PackedBytesPerGroupBlock(GgmlType type) {
  return IsPackedFloat(type) ? 1024 : 512;
}
constexpr int64_t PackedQuantBytes(GgmlType type, int64_t rows, int64_t cols) {
  return rows / kPackedRowsPerGroup * (cols / kQuantBlockSize) * PackedBytesPerGroupBlock(type);
}

// Packs Q8_0, BF16 or F16 weights (w.traits says which) as above (pack_quantized.cc).
void PackQ8Layout(const WeightView& w, uint8_t* out);

// y: [m, rows] for W rows [row_begin, row_end) (multiples of 16). Per element: Σ over blocks, in
// order, of d_w · d_x · (integer dot) (bf16: of the pairwise products; f16: of the products, one
// column at a time): independent of m and of the row range.
// x's -128 · Σ x_q per block ([m, cols / 32] int32, in packed_terms: PackedKernels::prepare_terms),
// where the Q8_0 kernel's accumulators start.
VLLM_X86_KERNEL void PrepareQ8_0Biases(PreparedActivations& x);
VLLM_X86_KERNEL PackedRowsFunction LinearRowsPackedQ8_0Avx512;
// The AVX2 kernel of packed Q8_0 (cpu/linear_packed_q8_0_avx2.cc): the same packing and bits, x's
// d_x per block in packed_terms.
VLLM_X86_KERNEL void PrepareQ8_0TermsAvx2(PreparedActivations& x);
VLLM_X86_KERNEL PackedRowsFunction LinearRowsPackedQ8_0Avx2;
VLLM_X86_KERNEL PackedRowsFunction LinearRowsPackedBf16Avx512;
// BF16's three kernels, which LinearRowsPackedBf16Avx512 chooses between (Bf16WeightPath()):
// vdpbf16ps on x's bf16 bits, and f32 FMAs on x's bf16_as_f32 values, bit for bit the same; AMX
// tiles on x's bf16 bits (only where AmxBf16Usable()).
VLLM_X86_KERNEL PackedRowsFunction LinearRowsPackedBf16DotAvx512;
VLLM_X86_KERNEL PackedRowsFunction LinearRowsPackedBf16FmaAvx512;
VLLM_X86_KERNEL PackedRowsFunction LinearRowsPackedBf16Amx;
VLLM_X86_KERNEL PackedRowsFunction LinearRowsPackedF16Avx512;
// The AVX2 kernels of packed BF16 and F16 (cpu/linear_packed_float_avx2.cc): the same packing and
// bits as LinearRowsPackedBf16FmaAvx512 (so LinearRowsPackedBf16DotAvx512's) and
// LinearRowsPackedF16Avx512; BF16 reads x's bf16_as_f32.
VLLM_X86_KERNEL PackedRowsFunction LinearRowsPackedBf16Avx2;
VLLM_X86_KERNEL PackedRowsFunction LinearRowsPackedF16Avx2;

template <GgmlType kType>
int64_t PackedQ8LayoutBytes(int64_t rows, int64_t cols) {
  const int64_t scale_bytes = IsPackedFloat(kType) ? 0 : rows * (cols / kQuantBlockSize) * 2;
  return PackedQuantBytes(kType, rows, cols) + scale_bytes;
}

// The packed form of Q8_0 / BF16 / F16 (the one path their type table entries take): `rows` and
// `prepare_terms` on AVX-512, `avx2` on AVX2 (none where left out).
template <GgmlType kType>
PackedForm Q8LayoutForm(decltype(PackedKernels::rows) rows,
                        decltype(PackedKernels::prepare_terms) prepare_terms = nullptr,
                        PackedKernels avx2 = {}) {
  return PackedForm{.rows_per_group = kPackedRowsPerGroup,
                    .cols_per_block = kQuantBlockSize,
                    .packed_bytes = PackedQ8LayoutBytes<kType>,
                    .pack = PackQ8Layout,
                    .kernels = {{}, avx2, {prepare_terms, rows}}};
}

}  // namespace vllm::kernels
