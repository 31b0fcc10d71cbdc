// Internal to kernels: the weight view every Linear implementation reads, the activations
// prepared once per call, and the per-ISA entry points.
//
// Semantics shared by every path (so they agree up to summation order):
//   F32, F16 weights: x stays f32.
//   BF16 weights:     x is rounded to bf16 first.
//   Q8_0, Q4_0:       x is quantized to Q8_0 blocks first (ggml's reference quantizer); each
//                     block contributes d_w * d_x * (integer dot product).
#pragma once

#include <cstdint>
#include <vector>

#include "common/ggml_type.h"
#include "common/thread_pool.h"
#include "kernels/isa.h"

namespace vllm::kernels {

struct WeightView {
  GgmlType type;
  const uint8_t* data;  // [rows] rows of row_bytes each
  int64_t rows;
  int64_t cols;
  int64_t row_bytes;
};

// x converted once per call into what the weight type's dot products consume on a given path.
struct PreparedActivations {
  int64_t m = 0;
  int64_t cols = 0;
  const float* f32 = nullptr;  // [m, cols]: F32 / F16 weights
  // BF16 weights: x rounded to bf16, as bf16 bits (AVX-512) or as f32 values (other paths).
  std::vector<uint16_t> bf16;      // [m, cols]
  std::vector<float> bf16_as_f32;  // [m, cols]
  // Q8_0 / Q4_0 weights: x quantized to Q8_0 blocks. AVX-512 reads the same values as
  // q + 128 (unsigned, for vpdpbusd) with f32 scales.
  std::vector<BlockQ8_0> q8;       // [m, cols / 32]
  std::vector<uint8_t> q8_biased;  // [m, cols]
  std::vector<float> q8_scales;    // [m, cols / 32]
  // Per pair of blocks, their two scales spread over 16 lanes (8 each), as the AVX-512 kernel
  // multiplies them: [m, cols / 64, 16].
  std::vector<float> q8_scale_lanes;
  // Per block, the sum of its quants (the packed kernels' bias correction): [m, cols / 32].
  std::vector<int32_t> q8_sums;
};

// Q8_0 / Q4_0 / BF16 weights packed for AVX-512, 16 rows at a time (rows a multiple of 16, cols
// of 32), so one instruction serves 16 rows: 4 consecutive quants of a row share a lane (unsigned,
// vpdpbusd's first operand), or 2 consecutive bf16 values (vdpbf16ps). For row group g and
// 32-column block b:
//   Q8_0: 8 steps k of 64 bytes; lane l holds row 16g + l's quants [4k, 4k + 4) plus 128.
//   Q4_0: 4 steps s of 64 bytes; lane l holds row 16g + l's 4 bytes qs[4s, 4s + 4): low nibbles
//         are elements [4s, +4), high nibbles elements [16 + 4s, +4), each plus 8 (as stored).
//   BF16: 16 steps k of 64 bytes; lane l holds row 16g + l's values [2k, 2k + 2).
// then, for Q8_0 / Q4_0, the group's 16 block scales (fp16).
struct PackedWeightView {
  GgmlType type = GgmlType::kQ8_0;
  int64_t rows = 0;
  int64_t cols = 0;
  const uint8_t* quants = nullptr;   // [rows / 16][cols / 32][bytes per group block]
  const uint16_t* scales = nullptr;  // [rows / 16][cols / 32][16]; none for BF16
};
constexpr int64_t kPackedRowsPerGroup = 16;
// Bytes of packed quants per group of 16 rows and block of 32 columns.
constexpr int64_t PackedBytesPerGroupBlock(GgmlType type) {
  return type == GgmlType::kQ4_0 ? 256 : type == GgmlType::kBF16 ? 1024 : 512;
}

// Packs W's rows (any CPU): quants of rows / 16 * cols / 32 * PackedBytesPerGroupBlock bytes,
// rows * cols / 32 scales (Q8_0 / Q4_0).
void PackQuantized(const WeightView& w, uint8_t* quants, uint16_t* scales);
// y: [m, rows] for W rows [row_begin, row_end) (multiples of 16). Per element: Σ over blocks, in
// order, of d_w · d_x · (integer dot): independent of m and of the row range.
void LinearRowsPackedAvx512(const PackedWeightView& w, const PreparedActivations& x,
                            int64_t row_begin, int64_t row_end, float* y);

PreparedActivations PrepareActivations(Isa isa, GgmlType weight_type, const float* x, int64_t m,
                                       int64_t cols, ThreadPool& pool);

// y: [m, rows] for W rows [row_begin, row_end). Each path's per-element arithmetic depends only
// on cols, never on m or on the row range.
void LinearRowsScalar(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                      int64_t row_end, float* y);
void LinearRowsAvx2(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                    int64_t row_end, float* y);
void LinearRowsAvx512(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                      int64_t row_end, float* y);

// Runs the whole product on one chosen path (tests compare paths with this).
void LinearWithIsa(Isa isa, const WeightView& w, const float* x, int64_t m, float* y,
                   ThreadPool& pool);

// Vector helpers per path.
float DotF32Scalar(const float* a, const float* b, int64_t n);
float DotF32Avx2(const float* a, const float* b, int64_t n);
float DotF32Avx512(const float* a, const float* b, int64_t n);
void AxpyF32Scalar(float alpha, const float* x, int64_t n, float* y);
void AxpyF32Avx2(float alpha, const float* x, int64_t n, float* y);
void AxpyF32Avx512(float alpha, const float* x, int64_t n, float* y);
void DotF32RowsAvx512(const float* a, int64_t num_rows, const float* b, int64_t n, float* out);
void AxpyF32RowsAvx512(const float* alphas, int64_t num_rows, const float* x, int64_t n, float* y);

}  // namespace vllm::kernels
