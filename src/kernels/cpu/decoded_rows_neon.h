// The in-place kernel for every integer weight type on 64-bit ARM, shared by the NEON and the
// NEON + dotprod tiers (each includes it in its own translation unit, built with its own -march;
// everything here has internal linkage).
//
// A W row's blocks are decoded once per block of x rows (DecodedBlock: int8 q, per sub-block f32
// scale and min), then each 32-value chunk meets every x row of the block. The vector units only
// compute the exact integer dot of each 16 values; the f32 arithmetic after it is the scalar
// reference's (LinearRowsDecodedScalar), expression for expression, so each y is its bits:
//   scaled = Σ_s scale[s] · dot_s,   min_term = Σ_s min[s] · Σ x_q over s,
//   sum += d_x · scaled,   mins += d_x · min_term,   y = sum − mins.
#pragma once

#include <arm_neon.h>

#include <algorithm>

#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

constexpr int64_t kDecodedXRowsPerBlockNeon = 64;

// `dot16(w, x)`: the int32 dot product of 16 weight and 16 x values.
template <typename Dot16>
void DecodedRowsNeon(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                     int64_t row_end, float* y, const Dot16& dot16) {
  const TypeTraits& traits = *w.traits;
  const int64_t block_size = traits.layout.block_size;
  const int64_t chunks_per_block = block_size / kQuantBlockSize;
  const int64_t num_blocks = w.cols / block_size;
  const int64_t x_blocks_per_row = w.cols / kQuantBlockSize;
  const bool half_sub_blocks = traits.sub_block_size == 16;
  DecodedBlock decoded;
  float sums[kDecodedXRowsPerBlockNeon];
  float mins[kDecodedXRowsPerBlockNeon];
  for (int64_t x_begin = 0; x_begin < x.m; x_begin += kDecodedXRowsPerBlockNeon) {
    const int64_t x_count = std::min(kDecodedXRowsPerBlockNeon, x.m - x_begin);
    for (int64_t j = row_begin; j < row_end; ++j) {
      const uint8_t* row = w.data + j * w.row_bytes;
      std::fill_n(sums, x_count, 0.0f);
      std::fill_n(mins, x_count, 0.0f);
      for (int64_t b = 0; b < num_blocks; ++b) {
        traits.decode(row + b * traits.layout.block_bytes, &decoded);
        for (int64_t c = 0; c < chunks_per_block; ++c) {
          const int8x16_t w_low = vld1q_s8(decoded.q + 32 * c);
          const int8x16_t w_high = vld1q_s8(decoded.q + 32 * c + 16);
          const int64_t s0 = half_sub_blocks ? 2 * c : c;
          const int64_t xb = b * chunks_per_block + c;
          for (int64_t i = 0; i < x_count; ++i) {
            const int64_t x_block = (x_begin + i) * x_blocks_per_row + xb;
            const int8_t* xq = x.q8[x_block].qs;
            const int32_t dot_low = dot16(w_low, vld1q_s8(xq));
            const int32_t dot_high = dot16(w_high, vld1q_s8(xq + 16));
            const int32_t* half_sums = &x.q8_half_sums[x_block * 2];
            float scaled = 0.0f, min_term = 0.0f;
            if (half_sub_blocks) {
              scaled += decoded.scale[s0] * static_cast<float>(dot_low);
              scaled += decoded.scale[s0 + 1] * static_cast<float>(dot_high);
              min_term += decoded.min[s0] * static_cast<float>(half_sums[0]);
              min_term += decoded.min[s0 + 1] * static_cast<float>(half_sums[1]);
            } else {
              scaled += decoded.scale[s0] * static_cast<float>(dot_low + dot_high);
              min_term += decoded.min[s0] * static_cast<float>(half_sums[0] + half_sums[1]);
            }
            const float x_scale = x.q8_scales[x_block];
            sums[i] += x_scale * scaled;
            mins[i] += x_scale * min_term;
          }
        }
      }
      for (int64_t i = 0; i < x_count; ++i) y[(x_begin + i) * w.rows + j] = sums[i] - mins[i];
    }
  }
}

}  // namespace
}  // namespace vllm::kernels
