// Helpers of the reference quantizers (each type's in its file in types/; the K-quants' searches
// in types/k_quants.h), which follow ggml's reference algorithms (no importance matrix) so the
// bytes match what llama.cpp writes.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/half.h"

namespace vllm::kernels {

namespace internal {

// Blocks whose largest magnitude is below this quantize to zero (ggml's GROUP_MAX_EPS).
inline constexpr float kNegligibleMagnitude = 1e-15f;

// The value of largest magnitude among x[0..n), with its sign (the first one on ties; 0 if n = 0).
inline float LargestMagnitude(const float* x, int n) {
  float largest = 0.0f;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > std::fabs(largest)) largest = x[i];
  }
  return largest;
}

// The IQ4_NL grid search (types/iq4_nl.cc), shared with IQ4_XS (types/iq4_xs.cc).

// The scale d of 32 values on the kIq4NlValues grid (x ≈ d * grid value) that minimises the
// x²-weighted squared error over a range of candidates; 0 for a (near-)zero block.
float BestIq4NlScale(const float* x);

// 32 values as the indices of their nearest grid values after scaling by `inverse_scale`, packed
// two per byte into 16 bytes (element j in byte j's low nibble, element j + 16 in its high).
void QuantizeIq4NlIndices(const float* x, float inverse_scale, uint8_t* qs);

// Round to nearest, ties to even, for |v| < 2^22: adding 1.5 * 2^23 leaves round(v) + 2^22 in the
// low 23 mantissa bits (ggml's nearest_int).
inline int RoundToInt(float v) {
  const uint32_t bits = BitsFromFp32(v + 12582912.0f);
  return static_cast<int>(bits & 0x007fffff) - 0x00400000;
}

}  // namespace internal
}  // namespace vllm::kernels
