// Internal to the AVX-512 translation units (activations_avx512.cc, dense_attention_avx512.cc,
// attention_amx.cc, attention_bf16_dots_avx512.cc, dot_peak_avx512.cc): the 16-lane vocabulary of
// the code written once over a vector width (exp_polynomial.h, lanes.h, activations_lanes.h), and
// e^t on it. Include it only where
// AVX-512 is enabled; everything here has internal linkage, so each translation unit keeps its own
// copy, compiled for its own flags.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/exp_polynomial.h"

namespace vllm::kernels {
namespace {

struct Avx512Lanes {
  using Vec = __m512;
  static constexpr int64_t kWidth = 16;
  // Beyond, e^t is inf / 0 anyway: vscalefps overflows to inf and underflows to 0 exactly.
  static constexpr float kExpClampHigh = vllm::kernels::kExpClampHigh;
  static constexpr float kExpClampLow = vllm::kernels::kExpClampLow;
  static Vec Set1(float v) { return _mm512_set1_ps(v); }
  static Vec Zero() { return _mm512_setzero_ps(); }
  static Vec Add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static Vec Sub(Vec a, Vec b) { return _mm512_sub_ps(a, b); }
  static Vec Mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
  static Vec Div(Vec a, Vec b) { return _mm512_div_ps(a, b); }
  static Vec Min(Vec a, Vec b) { return _mm512_min_ps(a, b); }
  static Vec Max(Vec a, Vec b) { return _mm512_max_ps(a, b); }
  static Vec Fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static Vec Fnmadd(Vec a, Vec b, Vec c) { return _mm512_fnmadd_ps(a, b, c); }
  static Vec Abs(Vec x) { return _mm512_abs_ps(x); }
  static Vec Round(Vec x) {
    return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  static Vec Scale2n(Vec x, Vec n) { return _mm512_scalef_ps(x, n); }
  static Vec WhereNegative(Vec x, Vec a, Vec b) {
    return _mm512_mask_mov_ps(a, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), b);
  }
  static float ReduceMax(Vec v) { return _mm512_reduce_max_ps(v); }
  static Vec Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static __mmask16 Mask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1); }
  static Vec LoadPart(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(Mask(n), p); }
  static void StorePart(float* p, int64_t n, Vec v) { _mm512_mask_storeu_ps(p, Mask(n), v); }
};

// e^t per lane (ExpLanes; relative error about 2e-7).
inline __m512 Exp(__m512 t) { return ExpLanes<Avx512Lanes>(t); }

}  // namespace
}  // namespace vllm::kernels
