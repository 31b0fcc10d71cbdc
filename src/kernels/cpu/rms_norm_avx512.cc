// AVX-512 RmsNorm, bit for bit the scalar one (elementwise.cc): its kSums = 8 running double sums
// of x² (values i mod 8) are the 8 double lanes of one register, each square exact in double (so
// the fused multiply-add rounds as the scalar add does), reduced pairwise in the same order
// (lanes k + 4, then k + 2, then k + 1); then x · scale · weight in f32, in that order.
#include <immintrin.h>

#include <cmath>

#include "kernels/linear_internal.h"

namespace vllm::kernels {

void RmsNormAvx512(const float* x, const float* weight, int64_t m, int64_t n, float eps,
                   float* out) {
  for (int64_t r = 0; r < m; ++r) {
    const float* row = x + r * n;
    float* out_row = out + r * n;
    __m512d sums = _mm512_setzero_pd();
    for (int64_t i = 0; i < n; i += 8) {
      const __mmask8 mask =
          n - i >= 8 ? __mmask8{0xff} : static_cast<__mmask8>((1u << (n - i)) - 1);
      const __m512d values = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(mask, row + i));
      sums = _mm512_fmadd_pd(values, values, sums);
    }
    const __m256d fours =
        _mm256_add_pd(_mm512_castpd512_pd256(sums), _mm512_extractf64x4_pd(sums, 1));
    const __m128d twos = _mm_add_pd(_mm256_castpd256_pd128(fours), _mm256_extractf128_pd(fours, 1));
    const double sum_squares = _mm_cvtsd_f64(_mm_add_sd(twos, _mm_unpackhi_pd(twos, twos)));
    const float scale = 1.0f / std::sqrt(static_cast<float>(sum_squares / n) + eps);
    const __m512 scales = _mm512_set1_ps(scale);
    for (int64_t j = 0; j < n; j += 16) {
      const __mmask16 mask =
          n - j >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << (n - j)) - 1);
      const __m512 scaled = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, row + j), scales);
      _mm512_mask_storeu_ps(out_row + j, mask,
                            _mm512_mul_ps(scaled, _mm512_maskz_loadu_ps(mask, weight + j)));
    }
  }
}

}  // namespace vllm::kernels
