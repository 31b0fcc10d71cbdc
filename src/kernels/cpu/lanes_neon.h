// Internal to the NEON translation units (activations_neon.cc, linear_neon.cc): the 4-lane
// vocabulary of the code written once over a vector width (lanes.h, activations_lanes.h,
// exp_polynomial.h). 2^n is built in the exponent bits (t clamped to where it stays a normal
// float); the tail goes through a zero-padded buffer (PaddedTail). 64-bit ARM only; everything
// here has internal linkage.
#pragma once

#include <arm_neon.h>

#include <cstdint>

#include "kernels/cpu/exp_polynomial.h"
#include "kernels/cpu/lanes.h"

namespace vllm::kernels {
namespace {

struct NeonLanes : PaddedTail<NeonLanes> {
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
  static float ReduceAdd(Vec v) { return vaddvq_f32(v); }
  static Vec Load(const float* p) { return vld1q_f32(p); }
  static void Store(float* p, Vec v) { vst1q_f32(p, v); }
};

}  // namespace
}  // namespace vllm::kernels
