// The in-place kernel for every integer weight type, shared by the AVX2 and AVX-512 paths (each
// includes it in its own ISA-flagged translation unit; everything here has internal linkage).
//
// A W row's blocks are decoded once per block of x rows (DecodedBlock: int8 q, per sub-block f32
// scale and min), then each 32-value chunk meets every x row of the block:
//   lanes = 8 int32 partial dots of q · x_q (lane k: values [4k, 4k + 4) of the chunk)
//   acc  += lanes · scale lanes · d_x          (scale lanes: the chunk's one scale, or for
//                                               16-value sub-blocks its two, 4 lanes each)
//   mins += d_x · Σ_s min[s] · (Σ x_q over sub-block s)
// and y = Σ lanes of acc − mins. The order depends only on cols, never on m or the row range.
#pragma once

#include <immintrin.h>

#include <algorithm>

#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

constexpr int64_t kDecodedXRowsPerBlock = 64;

inline float SumLanes256(__m256 v) {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
  return _mm_cvtss_f32(sum);
}

// `dot32(w_abs, w, x)`: 8 int32 lanes, lane k = Σ of products of values [4k, 4k + 4).
template <typename Dot32>
void DecodedRows(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                 int64_t row_end, float* y, const Dot32& dot32) {
  const TypeTraits& traits = *w.traits;
  const int64_t block_size = traits.layout.block_size;
  const int64_t chunks_per_block = block_size / kQuantBlockSize;
  const int64_t num_blocks = w.cols / block_size;
  const int64_t x_blocks_per_row = w.cols / kQuantBlockSize;
  const bool half_sub_blocks = traits.sub_block_size == 16;
  DecodedBlock decoded;
  __m256 acc[kDecodedXRowsPerBlock];
  float mins[kDecodedXRowsPerBlock];
  for (int64_t x_begin = 0; x_begin < x.m; x_begin += kDecodedXRowsPerBlock) {
    const int64_t x_count = std::min(kDecodedXRowsPerBlock, x.m - x_begin);
    for (int64_t j = row_begin; j < row_end; ++j) {
      const uint8_t* row = w.data + j * w.row_bytes;
      std::fill_n(acc, x_count, _mm256_setzero_ps());
      std::fill_n(mins, x_count, 0.0f);
      for (int64_t b = 0; b < num_blocks; ++b) {
        traits.decode(row + b * traits.layout.block_bytes, &decoded);
        for (int64_t c = 0; c < chunks_per_block; ++c) {
          const __m256i wq =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(decoded.q + 32 * c));
          const __m256i w_abs = _mm256_sign_epi8(wq, wq);
          const int64_t s0 = half_sub_blocks ? 2 * c : c;
          const int64_t s1 = half_sub_blocks ? 2 * c + 1 : c;
          const __m256 scale_lanes =
              _mm256_setr_m128(_mm_set1_ps(decoded.scale[s0]), _mm_set1_ps(decoded.scale[s1]));
          const int64_t xb = b * chunks_per_block + c;
          for (int64_t i = 0; i < x_count; ++i) {
            const int64_t x_row = x_begin + i;
            const __m256i xq = _mm256_loadu_si256(
                reinterpret_cast<const __m256i*>(x.q8[x_row * x_blocks_per_row + xb].qs));
            const float x_scale = x.q8_scales[x_row * x_blocks_per_row + xb];
            const __m256 lanes = _mm256_cvtepi32_ps(dot32(w_abs, wq, xq));
            acc[i] =
                _mm256_fmadd_ps(lanes, _mm256_mul_ps(scale_lanes, _mm256_set1_ps(x_scale)), acc[i]);
            const int32_t* half_sums = &x.q8_half_sums[(x_row * x_blocks_per_row + xb) * 2];
            const float min_term =
                half_sub_blocks ? decoded.min[s0] * static_cast<float>(half_sums[0]) +
                                      decoded.min[s1] * static_cast<float>(half_sums[1])
                                : decoded.min[s0] * static_cast<float>(half_sums[0] + half_sums[1]);
            mins[i] += x_scale * min_term;
          }
        }
      }
      for (int64_t i = 0; i < x_count; ++i) {
        y[(x_begin + i) * w.rows + j] = SumLanes256(acc[i]) - mins[i];
      }
    }
  }
}

}  // namespace
}  // namespace vllm::kernels
