// Internal to kernels: the weight views every Linear implementation reads, the activations
// prepared once per call, and the per-ISA kernels the type table (type_table.cc) points at.
//
// Semantics shared by every path (so they agree up to summation order):
//   F32, F16 weights:  x stays f32.
//   BF16 weights:      x is rounded to bf16 first.
//   integer weights:   x is quantized to Q8_0 blocks of 32 first (ggml's reference quantizer;
//                      K-quants: one scale per 256 values, ActivationFormat::kQ8K).
//                      With W's blocks decoded (DecodedBlock: value = scale[s] q - min[s]) each
//                      32-column chunk c of x contributes
//                        d_x[c] · Σ_{sub-blocks s in c} (scale[s] · Σ q·x_q − min[s] · Σ x_q).
#pragma once

#include <any>
#include <cstdint>
#include <vector>

#include "common/default_init_allocator.h"
#include "common/thread_pool.h"
#include "kernels/isa.h"
#include "kernels/quant_blocks.h"
#include "kernels/type_traits.h"

namespace vllm::kernels {

struct WeightView {
  const TypeTraits* traits;
  const uint8_t* data;  // [rows] rows of row_bytes each
  int64_t rows;
  int64_t cols;
  int64_t row_bytes;
};

// x converted once per call into what the weight type's dot products consume on a given path
// (buffers left uninitialized until PrepareActivations writes them whole).
struct PreparedActivations {
  int64_t m = 0;
  int64_t cols = 0;
  const float* f32 = nullptr;  // [m, cols]: F32 / F16 weights
  // F32 / F16 weights with an input order (LinearWeight::WithInputOrder): x's columns in that
  // order, where f32 points (the other formats gather each row as they convert it).
  UninitializedVector<float> ordered_x;  // [m, cols]
  // BF16 weights: x rounded to bf16, as bf16 bits (AVX-512) and as f32 values (other paths, and
  // AVX-512 where Bf16WeightPath() is kFmas).
  UninitializedVector<uint16_t> bf16;      // [m, cols]
  UninitializedVector<float> bf16_as_f32;  // [m, cols]
  // The same bits as AMX A tiles (where Bf16WeightPath() is kTiles): x tile t (rows [16 t, + 16),
  // fewer in the last) starts at value 16 t cols and holds, per block of 32 columns, its rows'
  // 32 values one after another.
  UninitializedVector<uint16_t> bf16_tiles;  // [m / 16 tiles][cols / 32][tile rows][32]
  // Integer weights: x quantized to Q8_0 blocks, their scales as f32, and the integer sums of
  // their quants per 32 and per 16 values.
  UninitializedVector<BlockQ8_0> q8;          // [m, cols / 32]
  UninitializedVector<float> q8_scales;       // [m, cols / 32]
  UninitializedVector<int32_t> q8_sums;       // [m, cols / 32]
  UninitializedVector<int32_t> q8_half_sums;  // [m, cols / 16]
  // Packed weights: what PackedKernels::prepare_terms builds from the above for its `rows` kernel
  // (a std::vector of the kernel's own per-chunk terms), once per call rather than once per row
  // range.
  std::any packed_terms;
};

// Q8_0 blocks of x that share one scale: 1 (kQ8) or the 8 of a 256-value super-block (kQ8K).
constexpr int64_t Q8BlocksPerScale(ActivationFormat format) {
  return format == ActivationFormat::kQ8K ? kSuperBlockSize / kQuantBlockSize : 1;
}

// PrepareActivations' kQ8 / kQ8K work on AVX-512 (and AVX2) for `num_blocks` consecutive blocks of
// x (a multiple of Q8BlocksPerScale(format)): the blocks, their scales as f32, and the sums of
// their quants per 32 and per 16 values, bit-identical to the scalar path's.
VLLM_X86_KERNEL void PrepareQ8BlocksAvx512(ActivationFormat format, const float* x,
                                           int64_t num_blocks, BlockQ8_0* blocks, float* scales,
                                           int32_t* sums, int32_t* half_sums);
VLLM_X86_KERNEL void PrepareQ8BlocksAvx2(ActivationFormat format, const float* x,
                                         int64_t num_blocks, BlockQ8_0* blocks, float* scales,
                                         int32_t* sums, int32_t* half_sums);

// BF16 activations are kept as bf16 bits on AVX-512 (vdpbf16ps), as f32 values elsewhere.
// input_order ([cols], or nullptr: the identity): x's columns are taken in that order, bit for bit
// as if x had been permuted first.
PreparedActivations PrepareActivations(Isa isa, ActivationFormat format, const float* x, int64_t m,
                                       int64_t cols, ThreadPool& pool,
                                       const int32_t* input_order = nullptr);

// A weight in a packed form (PackedForm in type_traits.h): `data` holds PackedForm::packed_bytes.
struct PackedWeightView {
  const TypeTraits* traits = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  const uint8_t* data = nullptr;
};

// Runs the whole product on one chosen path over the weight in place (tests compare paths), over
// x's columns in input_order where one is given (PrepareActivations).
void LinearWithIsa(Isa isa, const WeightView& w, const float* x, int64_t m, float* y,
                   ThreadPool& pool, const int32_t* input_order = nullptr);

// The in-place kernels: y: [m, rows] for W rows [row_begin, row_end). Each path's per-element
// arithmetic depends only on cols, never on m or on the row range.
RowsKernelFunction LinearRowsFloatScalar;    // F32 / F16 / BF16
RowsKernelFunction LinearRowsDecodedScalar;  // every integer type
// x86: F32 / F16 / BF16 (w's type chosen once per call, as on the other paths), every integer type
// through DecodedBlock, and Q8_0 / Q4_0 with their blocks as stored (on both SIMD paths: rows that
// do not fill the packed forms' groups of 16).
VLLM_X86_KERNEL RowsKernelFunction LinearRowsFloatAvx2, LinearRowsDecodedAvx2,
    LinearRowsQ8_0Q4_0Avx2, LinearRowsFloatAvx512, LinearRowsDecodedAvx512;
// 64-bit ARM (cpu/linear_neon.cc, cpu/linear_dotprod.cc): F32 / F16 / BF16 on NEON; every
// integer type on NEON and on NEON + dotprod, both bit for bit LinearRowsDecodedScalar.
VLLM_ARM_KERNEL RowsKernelFunction LinearRowsFloatNeon, LinearRowsDecodedNeon,
    LinearRowsDecodedDotprod;

// Vector helpers per path.
float DotF32Scalar(const float* a, const float* b, int64_t n);
VLLM_X86_KERNEL float DotF32Avx2(const float* a, const float* b, int64_t n);
VLLM_X86_KERNEL float DotF32Avx512(const float* a, const float* b, int64_t n);
void AxpyF32Scalar(float alpha, const float* x, int64_t n, float* y);
VLLM_X86_KERNEL void AxpyF32Avx2(float alpha, const float* x, int64_t n, float* y);
VLLM_X86_KERNEL void AxpyF32Avx512(float alpha, const float* x, int64_t n, float* y);
VLLM_X86_KERNEL void DotF32RowsAvx512(const float* a, int64_t num_rows, const float* b, int64_t n,
                                      float* out);
VLLM_X86_KERNEL void AxpyF32RowsAvx512(const float* alphas, int64_t num_rows, const float* x,
                                       int64_t n, float* y);
VLLM_X86_KERNEL void DotBf16RowsAvx512(const uint16_t* a, int64_t num_rows, const float* b,
                                       int64_t n, float* out);
VLLM_X86_KERNEL void AxpyBf16Avx512(float alpha, const uint16_t* x, int64_t n, float* y);
// The LoRA product of a bf16 adapter for num_rows (1 to 4) rows at once, reading each chunk of A
// and Bᵀ once for all of them. Shrink: t[k * rank + r] = DotBf16RowsAvx512 of A's row r
// ([rank, n]) with x[k]. Expand: y[k][c] += the sum over r in order of t[k * rank + r] · Bᵀ[r, c]
// from 0 by AxpyBf16Avx512's FMAs, for c < out (Bᵀ: [rank, out]). Each row's bits are its own.
VLLM_X86_KERNEL void LoraShrinkBf16Avx512(const uint16_t* a, int64_t rank, const float* const* x,
                                          int num_rows, int64_t n, float* t);
VLLM_X86_KERNEL void LoraExpandBf16Avx512(const uint16_t* b_transposed, int64_t rank, int64_t out,
                                          const float* t, float* const* y, int num_rows);
// RmsNorm (ops.h) per path: AVX-512 bit for bit the scalar one.
void RmsNormScalar(const float* x, const float* weight, int64_t m, int64_t n, float eps,
                   float* out);
VLLM_X86_KERNEL void RmsNormAvx512(const float* x, const float* weight, int64_t m, int64_t n,
                                   float eps, float* out);
// SiluMul / GeluTanhMul (ops.h) per path; the scalar path is the reference.
void SiluMulScalar(const float* gate, const float* up, int64_t n, float* out);
VLLM_X86_KERNEL void SiluMulAvx2(const float* gate, const float* up, int64_t n, float* out);
VLLM_X86_KERNEL void SiluMulAvx512(const float* gate, const float* up, int64_t n, float* out);
void GeluTanhMulScalar(const float* gate, const float* up, int64_t n, float* out);
VLLM_X86_KERNEL void GeluTanhMulAvx2(const float* gate, const float* up, int64_t n, float* out);
VLLM_X86_KERNEL void GeluTanhMulAvx512(const float* gate, const float* up, int64_t n, float* out);
// GeluErf (ops.h) per path; the scalar path (std::erf) is the reference.
void GeluErfScalar(const float* x, int64_t n, float* out);
VLLM_X86_KERNEL void GeluErfAvx2(const float* x, int64_t n, float* out);
VLLM_X86_KERNEL void GeluErfAvx512(const float* x, int64_t n, float* out);
// The same on NEON (cpu/linear_neon.cc, cpu/activations_neon.cc).
VLLM_ARM_KERNEL float DotF32Neon(const float* a, const float* b, int64_t n);
VLLM_ARM_KERNEL void AxpyF32Neon(float alpha, const float* x, int64_t n, float* y);
VLLM_ARM_KERNEL void SiluMulNeon(const float* gate, const float* up, int64_t n, float* out);
VLLM_ARM_KERNEL void GeluTanhMulNeon(const float* gate, const float* up, int64_t n, float* out);
VLLM_ARM_KERNEL void GeluErfNeon(const float* x, int64_t n, float* out);

}  // namespace vllm::kernels
