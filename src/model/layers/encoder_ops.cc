#include "model/layers/encoder_ops.h"

#include <cmath>

namespace vllm {

void LayerNorm(const float* x, const float* weight, const float* bias, int64_t m, int64_t n,
               float eps, float* out) {
  for (int64_t r = 0; r < m; ++r) {
    const float* row = x + r * n;
    float* result = out + r * n;
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) sum += row[i];
    const float mean = sum / static_cast<float>(n);
    float squares = 0.0f;
    for (int64_t i = 0; i < n; ++i) squares += (row[i] - mean) * (row[i] - mean);
    const float inv_std = 1.0f / std::sqrt(squares / static_cast<float>(n) + eps);
    for (int64_t i = 0; i < n; ++i) result[i] = (row[i] - mean) * inv_std * weight[i] + bias[i];
  }
}

void GeluErfInPlace(float* x, int64_t n) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * kInvSqrt2));
}

}  // namespace vllm
