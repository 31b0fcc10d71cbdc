// decoded_rows.h's Chunk on 8 f32 lanes, for the AVX2 and AVX-512 paths (each includes it in its
// own ISA-flagged translation unit; everything here has internal linkage):
//   lanes = 8 int32 partial dots of q · x_q (lane k: values [4k, 4k + 4) of the chunk)
//   sum  += lanes · scale lanes · d_x          (scale lanes: the chunk's one scale, or for
//                                               16-value sub-blocks its two, 4 lanes each)
//   mins += d_x · Σ_s min[s] · (Σ x_q over sub-block s)
// and y = Σ lanes of sum − mins.
#pragma once

#include <immintrin.h>

#include "kernels/cpu/decoded_rows.h"
#include "kernels/cpu/lanes_avx2.h"

namespace vllm::kernels {
namespace {

class DecodedChunk256 {
 public:
  using Sum = __m256;
  static Sum Zero() { return _mm256_setzero_ps(); }
  static float Total(Sum sum) { return SumLanes256(sum); }

  DecodedChunk256(const DecodedBlock& decoded, int64_t c, bool half_sub_blocks)
      : decoded_(decoded),
        half_sub_blocks_(half_sub_blocks),
        s0_(half_sub_blocks ? 2 * c : c),
        s1_(half_sub_blocks ? 2 * c + 1 : c),
        wq_(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(decoded.q + 32 * c))),
        w_abs_(_mm256_sign_epi8(wq_, wq_)),
        scale_lanes_(
            _mm256_setr_m128(_mm_set1_ps(decoded.scale[s0_]), _mm_set1_ps(decoded.scale[s1_]))) {}

  // `dot32(w_abs, w, x)`: 8 int32 lanes, lane k = Σ of products of values [4k, 4k + 4).
  template <typename Dot32>
  void Add(const int8_t* x_values, float x_scale, const int32_t* half_sums, const Dot32& dot32,
           Sum& sum, float& mins) const {
    const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x_values));
    const __m256 lanes = _mm256_cvtepi32_ps(dot32(w_abs_, wq_, xq));
    sum = _mm256_fmadd_ps(lanes, _mm256_mul_ps(scale_lanes_, _mm256_set1_ps(x_scale)), sum);
    const float min_term =
        half_sub_blocks_ ? decoded_.min[s0_] * static_cast<float>(half_sums[0]) +
                               decoded_.min[s1_] * static_cast<float>(half_sums[1])
                         : decoded_.min[s0_] * static_cast<float>(half_sums[0] + half_sums[1]);
    mins += x_scale * min_term;
  }

 private:
  const DecodedBlock& decoded_;
  bool half_sub_blocks_;
  int64_t s0_, s1_;  // the sub-blocks of the chunk's two halves (one, for 32-value sub-blocks)
  __m256i wq_, w_abs_;
  __m256 scale_lanes_;
};

}  // namespace
}  // namespace vllm::kernels
