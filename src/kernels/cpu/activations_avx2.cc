// AVX2 SiLU · up, GELU(tanh) · up and GELU(erf) (activations_lanes.h) on 8 lanes; 2^n is built in
// the exponent bits (t clamped to where it stays a normal float), and the tail runs through a
// zero-padded buffer of 8 lanes.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/activations_lanes.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

struct Avx2Lanes {
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
  static Vec Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec LoadPart(const float* p, int64_t n) {
    float lanes[kWidth] = {};
    std::copy(p, p + n, lanes);
    return _mm256_loadu_ps(lanes);
  }
  static void StorePart(float* p, int64_t n, Vec v) {
    float lanes[kWidth];
    _mm256_storeu_ps(lanes, v);
    std::copy(lanes, lanes + n, p);
  }
};

}  // namespace

void GeluErfAvx2(const float* x, int64_t n, float* out) { GeluErfLanes<Avx2Lanes>(x, n, out); }

void SiluMulAvx2(const float* gate, const float* up, int64_t n, float* out) {
  SiluMulLanes<Avx2Lanes>(gate, up, n, out);
}

void GeluTanhMulAvx2(const float* gate, const float* up, int64_t n, float* out) {
  GeluTanhMulLanes<Avx2Lanes>(gate, up, n, out);
}

}  // namespace vllm::kernels
