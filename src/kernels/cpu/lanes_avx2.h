// Internal to the AVX2 translation units (activations_avx2.cc, linear_avx2.cc, dot_peak_avx2.cc;
// decoded_rows_avx2.h for AVX2 and AVX-512): the 8-lane vocabulary of the code written once over a
// vector width (lanes.h, activations_lanes.h, exp_polynomial.h). 2^n is built in the exponent bits
// (t clamped to where it stays a normal float); the tail goes through a zero-padded buffer
// (PaddedTail). Include it only where AVX2 is enabled; everything here has internal linkage.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/exp_polynomial.h"
#include "kernels/cpu/lanes.h"

namespace vllm::kernels {
namespace {

inline float SumLanes256(__m256 v) {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
  return _mm_cvtss_f32(sum);
}

struct Avx2Lanes : PaddedTail<Avx2Lanes> {
  using Vec = __m256;
  static constexpr int64_t kWidth = 8;
  static constexpr float kExpClampHigh = kExpClampHighNormal;
  static constexpr float kExpClampLow = kExpClampLowNormal;
  static Vec Set1(float v) { return _mm256_set1_ps(v); }
  static Vec Zero() { return _mm256_setzero_ps(); }
  static Vec Add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static Vec Sub(Vec a, Vec b) { return _mm256_sub_ps(a, b); }
  static Vec Mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
  static Vec Div(Vec a, Vec b) { return _mm256_div_ps(a, b); }
  static Vec Min(Vec a, Vec b) { return _mm256_min_ps(a, b); }
  static Vec Max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
  static Vec Fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static Vec Fnmadd(Vec a, Vec b, Vec c) { return _mm256_fnmadd_ps(a, b, c); }
  static Vec Abs(Vec x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
  static Vec Round(Vec x) {
    return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  // 2^n as (n + 127) << 23 in the exponent field.
  static Vec Scale2n(Vec x, Vec n) {
    const __m256i exponent =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(x, _mm256_castsi256_ps(exponent));
  }
  static Vec WhereNegative(Vec x, Vec a, Vec b) {
    return _mm256_blendv_ps(a, b, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
  }
  static float ReduceAdd(Vec v) { return SumLanes256(v); }
  static float ReduceMax(Vec v) {
    __m128 max = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    max = _mm_max_ps(max, _mm_movehl_ps(max, max));
    return _mm_cvtss_f32(_mm_max_ss(max, _mm_movehdup_ps(max)));
  }
  static Vec Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
};

}  // namespace
}  // namespace vllm::kernels
