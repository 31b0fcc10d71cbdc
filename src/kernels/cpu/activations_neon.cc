// NEON SiLU · up, GELU(tanh) · up and GELU(erf) (activations_lanes.h) on 4 lanes; 2^n is built in
// the exponent bits (t clamped to where it stays a normal float), and the tail runs through a
// zero-padded buffer of 4 lanes.
#include <arm_neon.h>

#include <algorithm>

#include "kernels/cpu/activations_lanes.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

struct NeonLanes {
  using Vec = float32x4_t;
  static constexpr int64_t kWidth = 4;
  static constexpr float kExpClampHigh = kExpClampHighNormal;
  static constexpr float kExpClampLow = kExpClampLowNormal;
  static Vec Set1(float v) { return vdupq_n_f32(v); }
  static Vec Zero() { return vdupq_n_f32(0.0f); }
  static Vec Add(Vec a, Vec b) { return vaddq_f32(a, b); }
  static Vec Sub(Vec a, Vec b) { return vsubq_f32(a, b); }
  static Vec Mul(Vec a, Vec b) { return vmulq_f32(a, b); }
  static Vec Div(Vec a, Vec b) { return vdivq_f32(a, b); }
  static Vec Min(Vec a, Vec b) { return vminq_f32(a, b); }
  static Vec Max(Vec a, Vec b) { return vmaxq_f32(a, b); }
  static Vec Fmadd(Vec a, Vec b, Vec c) { return vfmaq_f32(c, a, b); }
  static Vec Fnmadd(Vec a, Vec b, Vec c) { return vfmsq_f32(c, a, b); }
  static Vec Abs(Vec x) { return vabsq_f32(x); }
  static Vec Round(Vec x) { return vrndnq_f32(x); }
  // 2^n as (n + 127) << 23 in the exponent field.
  static Vec Scale2n(Vec x, Vec n) {
    const int32x4_t exponent = vshlq_n_s32(vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127)), 23);
    return vmulq_f32(x, vreinterpretq_f32_s32(exponent));
  }
  static Vec WhereNegative(Vec x, Vec a, Vec b) { return vbslq_f32(vcltzq_f32(x), b, a); }
  static Vec Load(const float* p) { return vld1q_f32(p); }
  static void Store(float* p, Vec v) { vst1q_f32(p, v); }
  static Vec LoadPart(const float* p, int64_t n) {
    float lanes[kWidth] = {};
    std::copy(p, p + n, lanes);
    return vld1q_f32(lanes);
  }
  static void StorePart(float* p, int64_t n, Vec v) {
    float lanes[kWidth];
    vst1q_f32(lanes, v);
    std::copy(lanes, lanes + n, p);
  }
};

}  // namespace

void GeluErfNeon(const float* x, int64_t n, float* out) { GeluErfLanes<NeonLanes>(x, n, out); }

void SiluMulNeon(const float* gate, const float* up, int64_t n, float* out) {
  SiluMulLanes<NeonLanes>(gate, up, n, out);
}

void GeluTanhMulNeon(const float* gate, const float* up, int64_t n, float* out) {
  GeluTanhMulLanes<NeonLanes>(gate, up, n, out);
}

}  // namespace vllm::kernels
