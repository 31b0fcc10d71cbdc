// Internal to the AVX-512 translation units (activations_avx512.cc, dense_attention_avx512.cc,
// attention_amx.cc): e^t per lane from exp_polynomial.h's constants. Include it only where AVX-512
// is enabled, so that every copy of the inline function is an AVX-512 one.
#pragma once

#include <immintrin.h>

#include "kernels/cpu/exp_polynomial.h"

namespace vllm::kernels {

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

}  // namespace vllm::kernels
