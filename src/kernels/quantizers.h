// Reference quantizers: one row of f32 values to GGUF blocks (quant_blocks.h), with the algorithms
// of ggml's reference quantizers (no importance matrix), so the bytes match what llama.cpp writes.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/half.h"

namespace vllm::kernels {

// Each writes one row of n f32 values (n a multiple of the type's block size: 32, or 256 for
// the K-quants and IQ4_XS) as n / block_size blocks at `out`.
void QuantizeRowQ4_1(const float* x, int64_t n, void* out);
void QuantizeRowQ4_Z(const float* x, int64_t n, void* out);  // not a ggml type: no ggml bytes
void QuantizeRowQ5_0(const float* x, int64_t n, void* out);
void QuantizeRowQ5_1(const float* x, int64_t n, void* out);
void QuantizeRowQ2_K(const float* x, int64_t n, void* out);
void QuantizeRowQ3_K(const float* x, int64_t n, void* out);
void QuantizeRowQ4_K(const float* x, int64_t n, void* out);
void QuantizeRowQ5_K(const float* x, int64_t n, void* out);
void QuantizeRowQ6_K(const float* x, int64_t n, void* out);
void QuantizeRowIq4Nl(const float* x, int64_t n, void* out);
void QuantizeRowIq4Xs(const float* x, int64_t n, void* out);
void QuantizeRowMxfp4(const float* x, int64_t n, void* out);

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

// The IQ4_NL grid search (quantize_legacy.cc), shared with IQ4_XS (quantize_kquants.cc).

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
