// Internal to the SIMD activation translation units (activations_avx2.cc, activations_avx512.cc,
// activations_neon.cc): SiLU · up, GELU(tanh) · up and GELU(erf) written once over a vector width.
// The gated two are x · sigmoid(k(x)):
//   silu(x) = x / (1 + e^-x),   gelu_tanh(x) = 0.5 x (1 + tanh(y)) = x / (1 + e^-2y),
//   y = sqrt(2/π) (x + 0.044715 x³),
// GELU(erf) takes erfc from exp_polynomial.h's constants, e^t from its ExpLanes. Each ISA supplies
// `Lanes` (lanes_avx2.h, lanes_neon.h, exp_avx512.h): ExpLanes' vocabulary, and its width kWidth,
// Zero, Sub, Div, Abs, WhereNegative(x, a, b) (b in x's negative lanes, else a), Load / Store of
// kWidth values and LoadPart / StorePart of the last n < kWidth (the lanes past n read as 0;
// lanes.h's PaddedTail where the ISA has no masked loads). Everything here has internal linkage,
// so each ISA-flagged translation unit keeps its own copy.
#pragma once

#include <cstdint>

#include "kernels/cpu/exp_polynomial.h"
#include "kernels/cpu/lanes.h"

namespace vllm::kernels {
namespace {

// out[i] = lanes(in[i]...) for i < n, kWidth values at a time, then the tail.
template <typename Lanes, typename Fn, typename... In>
inline void MapLanes(int64_t n, float* out, const Fn& lanes, const In*... in) {
  int64_t i = 0;
  for (; i + Lanes::kWidth <= n; i += Lanes::kWidth) {
    Lanes::Store(out + i, lanes(Lanes::Load(in + i)...));
  }
  if (i < n) Lanes::StorePart(out + i, n - i, lanes(Lanes::LoadPart(in + i, n - i)...));
}

// out = x / (1 + e^-k) · up for every lane, k = argument(x).
template <typename Lanes, typename Argument>
inline void SigmoidGatedMul(const float* gate, const float* up, int64_t n, float* out,
                            const Argument& argument) {
  using Vec = typename Lanes::Vec;
  const Vec one = Lanes::Set1(1.0f);
  MapLanes<Lanes>(
      n, out,
      [&](Vec x, Vec u) {
        const Vec e = ExpLanes<Lanes>(Lanes::Sub(Lanes::Zero(), argument(x)));
        return Lanes::Mul(Lanes::Div(x, Lanes::Add(one, e)), u);
      },
      gate, up);
}

template <typename Lanes>
inline void SiluMulLanes(const float* gate, const float* up, int64_t n, float* out) {
  SigmoidGatedMul<Lanes>(gate, up, n, out, [](typename Lanes::Vec x) { return x; });
}

template <typename Lanes>
inline void GeluTanhMulLanes(const float* gate, const float* up, int64_t n, float* out) {
  using Vec = typename Lanes::Vec;
  SigmoidGatedMul<Lanes>(gate, up, n, out, [](Vec x) {
    // 2y = 2 sqrt(2/π) x (1 + 0.044715 x²)
    const Vec inner = Lanes::Fmadd(Lanes::Mul(x, x), Lanes::Set1(kGeluCubic), Lanes::Set1(1.0f));
    return Lanes::Mul(Lanes::Mul(x, Lanes::Set1(2.0f * kSqrt2OverPi)), inner);
  });
}

// x / 2 · (1 + erf(x / sqrt(2))) per lane, erfc from exp_polynomial.h's constants.
template <typename Lanes>
inline typename Lanes::Vec GeluErfVector(typename Lanes::Vec x) {
  using Vec = typename Lanes::Vec;
  const Vec z = Lanes::Mul(Lanes::Abs(x), Lanes::Set1(kInvSqrt2));
  const Vec one = Lanes::Set1(1.0f);
  const Vec t = Lanes::Div(one, Lanes::Fmadd(z, Lanes::Set1(kErfcP), one));
  Vec p = Lanes::Set1(kErfcCoefficients[0]);
#pragma GCC unroll 8
  for (int i = 1; i < kNumErfcCoefficients; ++i) {
    p = Lanes::Fmadd(p, t, Lanes::Set1(kErfcCoefficients[i]));
  }
  const Vec half_erfc = Lanes::Mul(
      Lanes::Mul(Lanes::Mul(p, t), ExpLanes<Lanes>(Lanes::Mul(Lanes::Sub(Lanes::Zero(), z), z))),
      Lanes::Set1(0.5f));
  // x >= 0: x - x erfc / 2; x < 0: x erfc / 2.
  return Lanes::WhereNegative(x, Lanes::Fnmadd(x, half_erfc, x), Lanes::Mul(x, half_erfc));
}

template <typename Lanes>
inline void GeluErfLanes(const float* x, int64_t n, float* out) {
  MapLanes<Lanes>(n, out, GeluErfVector<Lanes>, x);
}

}  // namespace
}  // namespace vllm::kernels
