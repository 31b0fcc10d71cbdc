// AVX2 SiLU · up, GELU(tanh) · up and GELU(erf), as activations_avx512.cc computes them; 2^n is
// built in the exponent bits (t clamped to where it stays a normal float), and the tail runs
// through a zero-padded buffer of 8 lanes.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/exp_polynomial.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

inline __m256 Exp(__m256 t) {
  t = _mm256_min_ps(_mm256_set1_ps(kExpClampHighNormal),
                    _mm256_max_ps(_mm256_set1_ps(kExpClampLowNormal), t));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(t, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2High), t);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Low), r);
  __m256 p = _mm256_set1_ps(kExpCoefficients[0]);
#pragma GCC unroll 8
  for (int i = 1; i < kNumExpCoefficients; ++i) {
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpCoefficients[i]));
  }
  const __m256 e_r =
      _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(r, r), p, r), _mm256_set1_ps(1.0f));
  // 2^n as (n + 127) << 23 in the exponent field.
  const __m256i exponent =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(e_r, _mm256_castsi256_ps(exponent));
}

template <typename Argument>
void SigmoidGatedMul(const float* gate, const float* up, int64_t n, float* out,
                     const Argument& argument) {
  const __m256 one = _mm256_set1_ps(1.0f);
  auto lanes = [&](__m256 x, __m256 u) {
    const __m256 e = Exp(_mm256_sub_ps(_mm256_setzero_ps(), argument(x)));
    return _mm256_mul_ps(_mm256_div_ps(x, _mm256_add_ps(one, e)), u);
  };
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, lanes(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  }
  if (i < n) {
    float x[8] = {}, u[8] = {}, result[8];
    std::copy(gate + i, gate + n, x);
    std::copy(up + i, up + n, u);
    _mm256_storeu_ps(result, lanes(_mm256_loadu_ps(x), _mm256_loadu_ps(u)));
    std::copy(result, result + (n - i), out + i);
  }
}

// GELU(erf) per lane, as activations_avx512.cc computes it.
inline __m256 GeluErfLanes(__m256 x) {
  const __m256 z =
      _mm256_mul_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(kInvSqrt2));
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(z, _mm256_set1_ps(kErfcP), one));
  __m256 p = _mm256_set1_ps(kErfcCoefficients[0]);
#pragma GCC unroll 8
  for (int i = 1; i < kNumErfcCoefficients; ++i) {
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(kErfcCoefficients[i]));
  }
  const __m256 half_erfc =
      _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(p, t),
                                  Exp(_mm256_mul_ps(_mm256_sub_ps(_mm256_setzero_ps(), z), z))),
                    _mm256_set1_ps(0.5f));
  const __m256 negative = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
  return _mm256_blendv_ps(_mm256_fnmadd_ps(x, half_erfc, x), _mm256_mul_ps(x, half_erfc), negative);
}

}  // namespace

void GeluErfAvx2(const float* x, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, GeluErfLanes(_mm256_loadu_ps(x + i)));
  if (i < n) {
    float lanes[8] = {}, result[8];
    std::copy(x + i, x + n, lanes);
    _mm256_storeu_ps(result, GeluErfLanes(_mm256_loadu_ps(lanes)));
    std::copy(result, result + (n - i), out + i);
  }
}

void SiluMulAvx2(const float* gate, const float* up, int64_t n, float* out) {
  SigmoidGatedMul(gate, up, n, out, [](__m256 x) { return x; });
}

void GeluTanhMulAvx2(const float* gate, const float* up, int64_t n, float* out) {
  SigmoidGatedMul(gate, up, n, out, [](__m256 x) {
    const __m256 inner =
        _mm256_fmadd_ps(_mm256_mul_ps(x, x), _mm256_set1_ps(kGeluCubic), _mm256_set1_ps(1.0f));
    return _mm256_mul_ps(_mm256_mul_ps(x, _mm256_set1_ps(2.0f * kSqrt2OverPi)), inner);
  });
}

}  // namespace vllm::kernels
