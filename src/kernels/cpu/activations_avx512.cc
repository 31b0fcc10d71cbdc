// AVX-512 SiLU · up, GELU(tanh) · up and GELU(erf). The gated two are x · sigmoid(k(x)):
//   silu(x) = x / (1 + e^-x),   gelu_tanh(x) = 0.5 x (1 + tanh(y)) = x / (1 + e^-2y),
//   y = sqrt(2/π) (x + 0.044715 x³),
// GELU(erf) takes erfc from exp_polynomial.h's constants; e^t from exp_avx512.h (relative error
// about 2e-7); lanes past n are masked.
#include <immintrin.h>

#include "kernels/cpu/exp_avx512.h"
#include "kernels/cpu/exp_polynomial.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

// out = x / (1 + e^-k) · up for every lane, k = argument(x).
template <typename Argument>
void SigmoidGatedMul(const float* gate, const float* up, int64_t n, float* out,
                     const Argument& argument) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask =
        n - i >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 x = _mm512_maskz_loadu_ps(mask, gate + i);
    const __m512 u = _mm512_maskz_loadu_ps(mask, up + i);
    const __m512 e = Exp(_mm512_sub_ps(_mm512_setzero_ps(), argument(x)));
    _mm512_mask_storeu_ps(out + i, mask, _mm512_mul_ps(_mm512_div_ps(x, _mm512_add_ps(one, e)), u));
  }
}

// x / 2 · (1 + erf(x / sqrt(2))) per lane, erfc from exp_polynomial.h's constants.
inline __m512 GeluErfLanes(__m512 x) {
  const __m512 z = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(kInvSqrt2));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(z, _mm512_set1_ps(kErfcP), one));
  __m512 p = _mm512_set1_ps(kErfcCoefficients[0]);
#pragma GCC unroll 8
  for (int i = 1; i < kNumErfcCoefficients; ++i) {
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(kErfcCoefficients[i]));
  }
  const __m512 half_erfc =
      _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(p, t),
                                  Exp(_mm512_mul_ps(_mm512_sub_ps(_mm512_setzero_ps(), z), z))),
                    _mm512_set1_ps(0.5f));
  const __mmask16 negative = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  // x >= 0: x - x erfc / 2; x < 0: x erfc / 2.
  return _mm512_mask_mul_ps(_mm512_fnmadd_ps(x, half_erfc, x), negative, x, half_erfc);
}

}  // namespace

void GeluErfAvx512(const float* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask =
        n - i >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(out + i, mask, GeluErfLanes(_mm512_maskz_loadu_ps(mask, x + i)));
  }
}

void SiluMulAvx512(const float* gate, const float* up, int64_t n, float* out) {
  SigmoidGatedMul(gate, up, n, out, [](__m512 x) { return x; });
}

void GeluTanhMulAvx512(const float* gate, const float* up, int64_t n, float* out) {
  SigmoidGatedMul(gate, up, n, out, [](__m512 x) {
    // 2y = 2 sqrt(2/π) x (1 + 0.044715 x²)
    const __m512 inner =
        _mm512_fmadd_ps(_mm512_mul_ps(x, x), _mm512_set1_ps(kGeluCubic), _mm512_set1_ps(1.0f));
    return _mm512_mul_ps(_mm512_mul_ps(x, _mm512_set1_ps(2.0f * kSqrt2OverPi)), inner);
  });
}

}  // namespace vllm::kernels
