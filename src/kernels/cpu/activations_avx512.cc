// AVX-512 SiLU · up and GELU(tanh) · up. Both activations are x · sigmoid(k(x)):
//   silu(x) = x / (1 + e^-x),   gelu_tanh(x) = 0.5 x (1 + tanh(y)) = x / (1 + e^-2y),
//   y = sqrt(2/π) (x + 0.044715 x³),
// with e^t from exp_polynomial.h (relative error about 2e-7); lanes past n are masked.
#include <immintrin.h>

#include "kernels/cpu/exp_polynomial.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

// e^t per lane: t = n ln2 + r, e^r by the polynomial, times 2^n by vscalefps (which overflows to
// inf and underflows to 0 exactly). t is clamped first so that n stays finite; NaN passes through.
inline __m512 Exp(__m512 t) {
  t = _mm512_min_ps(_mm512_set1_ps(kExpClampHigh), _mm512_max_ps(_mm512_set1_ps(kExpClampLow), t));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(t, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2High), t);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Low), r);
  __m512 p = _mm512_set1_ps(kExpCoefficients[0]);
#pragma GCC unroll 8
  for (int i = 1; i < kNumExpCoefficients; ++i) {
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpCoefficients[i]));
  }
  // e^r = 1 + r + r² p
  const __m512 e_r =
      _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(r, r), p, r), _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(e_r, n);
}

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

}  // namespace

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
