// decoded_rows.h's Chunk on 64-bit ARM, for the NEON and the NEON + dotprod tiers (each includes it
// in its own translation unit, built with its own -march; everything here has internal linkage).
// The vector units only compute the exact integer dot of each 16 values; the f32 arithmetic after
// it is the scalar reference's (LinearRowsDecodedScalar), expression for expression, so each y is
// its bits:
//   scaled = Σ_s scale[s] · dot_s,   min_term = Σ_s min[s] · Σ x_q over s,
//   sum += d_x · scaled,   mins += d_x · min_term,   y = sum − mins.
#pragma once

#include <arm_neon.h>

#include "kernels/cpu/decoded_rows.h"

namespace vllm::kernels {
namespace {

class DecodedChunkNeon {
 public:
  using Sum = float;
  static Sum Zero() { return 0.0f; }
  static float Total(Sum sum) { return sum; }

  DecodedChunkNeon(const DecodedBlock& decoded, int64_t c, bool half_sub_blocks)
      : decoded_(decoded),
        half_sub_blocks_(half_sub_blocks),
        s0_(half_sub_blocks ? 2 * c : c),
        w_low_(vld1q_s8(decoded.q + 32 * c)),
        w_high_(vld1q_s8(decoded.q + 32 * c + 16)) {}

  // `dot16(w, x)`: the int32 dot product of 16 weight and 16 x values.
  template <typename Dot16>
  void Add(const int8_t* x_values, float x_scale, const int32_t* half_sums, const Dot16& dot16,
           Sum& sum, float& mins) const {
    const int32_t dot_low = dot16(w_low_, vld1q_s8(x_values));
    const int32_t dot_high = dot16(w_high_, vld1q_s8(x_values + 16));
    float scaled = 0.0f, min_term = 0.0f;
    if (half_sub_blocks_) {
      scaled += decoded_.scale[s0_] * static_cast<float>(dot_low);
      scaled += decoded_.scale[s0_ + 1] * static_cast<float>(dot_high);
      min_term += decoded_.min[s0_] * static_cast<float>(half_sums[0]);
      min_term += decoded_.min[s0_ + 1] * static_cast<float>(half_sums[1]);
    } else {
      scaled += decoded_.scale[s0_] * static_cast<float>(dot_low + dot_high);
      min_term += decoded_.min[s0_] * static_cast<float>(half_sums[0] + half_sums[1]);
    }
    sum += x_scale * scaled;
    mins += x_scale * min_term;
  }

 private:
  const DecodedBlock& decoded_;
  bool half_sub_blocks_;
  int64_t s0_;  // the chunk's first sub-block
  int8x16_t w_low_, w_high_;
};

}  // namespace
}  // namespace vllm::kernels
