// Internal: code written once over a vector width that is not an activation (those are in
// activations_lanes.h). Each ISA's Lanes (lanes_avx2.h, lanes_neon.h, exp_avx512.h) supplies Vec,
// kWidth, Set1, Zero, Fmadd (a b + c), Load / Store of kWidth values and, for DotLanes, ReduceAdd
// (the sum of the lanes, in the ISA's own order); x86's also ReduceMax (cpu/quantize_q8_lanes.h).
// Everything here has internal linkage, so each ISA-flagged translation unit keeps its own copy.
#pragma once

#include <algorithm>
#include <cstdint>

namespace vllm::kernels {
namespace {

// LoadPart / StorePart for Lanes (derived from PaddedTail<Lanes>) through a zero-padded buffer of
// kWidth lanes and its Load / Store.
template <typename Lanes>
struct PaddedTail {
  static auto LoadPart(const float* p, int64_t n) {
    float lanes[Lanes::kWidth] = {};
    std::copy(p, p + n, lanes);
    return Lanes::Load(lanes);
  }
  template <typename Vec>
  static void StorePart(float* p, int64_t n, Vec v) {
    float lanes[Lanes::kWidth];
    Lanes::Store(lanes, v);
    std::copy(lanes, lanes + n, p);
  }
};

// Σ a[i] · b[i]: one FMA chain of kWidth lanes, their sum, then the values past the last full
// vector added in order.
template <typename Lanes>
inline float DotLanes(const float* a, const float* b, int64_t n) {
  typename Lanes::Vec acc = Lanes::Zero();
  int64_t i = 0;
  for (; i + Lanes::kWidth <= n; i += Lanes::kWidth) {
    acc = Lanes::Fmadd(Lanes::Load(a + i), Lanes::Load(b + i), acc);
  }
  float sum = Lanes::ReduceAdd(acc);
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// y[i] += alpha · x[i], one FMA per value.
template <typename Lanes>
inline void AxpyLanes(float alpha, const float* x, int64_t n, float* y) {
  const typename Lanes::Vec scale = Lanes::Set1(alpha);
  int64_t i = 0;
  for (; i + Lanes::kWidth <= n; i += Lanes::kWidth) {
    Lanes::Store(y + i, Lanes::Fmadd(scale, Lanes::Load(x + i), Lanes::Load(y + i)));
  }
  for (; i < n; ++i) y[i] += alpha * x[i];
}

}  // namespace
}  // namespace vllm::kernels
