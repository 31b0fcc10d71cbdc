// The row-wise operations of BERT-style encoders that decoders do not use: LayerNorm with weight
// and bias, and GELU in its exact (erf) form. Each row is computed alone, in a fixed order.
#pragma once

#include <cstdint>

namespace vllm {

// out[r, i] = (x[r, i] - mean_r) / sqrt(var_r + eps) * weight[i] + bias[i], over rows of n values
// (var_r the biased variance); x: [m, n]; out may alias x.
void LayerNorm(const float* x, const float* weight, const float* bias, int64_t m, int64_t n,
               float eps, float* out);

// x[i] = x[i] / 2 · (1 + erf(x[i] / sqrt(2))) for i < n, in place.
void GeluErfInPlace(float* x, int64_t n);

}  // namespace vllm
