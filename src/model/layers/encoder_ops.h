// The row-wise operations of BERT-style encoders that decoders do not use: LayerNorm with weight
// and bias, fused with the residual add and the projection's bias that precede it, and the bias
// add fused with GELU in its exact (erf) form. Each row is computed alone, in a fixed order, so
// the split of rows over threads never changes a result.
#pragma once

#include <cstdint>

#include "common/thread_pool.h"

namespace vllm {

// A LayerNorm's parameters: weight and bias, [n] each.
struct LayerNormParams {
  const float* weight = nullptr;
  const float* bias = nullptr;
  float eps = 0.0f;
};

// out[r, i] = (x[r, i] - mean_r) / sqrt(var_r + eps) * weight[i] + bias[i], over rows of n values
// (var_r the biased variance); x: [m, n]; out may alias x. Runs on the calling thread.
void LayerNorm(const float* x, const LayerNormParams& norm, int64_t m, int64_t n, float* out);

// x[r] = LayerNorm(x[r] + (y[r] + bias)) for every row r, rows split over `pool`.
// x, y: [m, n]; bias: [n].
void AddBiasResidualLayerNorm(const float* y, const float* bias, const LayerNormParams& norm,
                              int64_t m, int64_t n, ThreadPool& pool, float* x);

// x[r, i] = gelu_erf(x[r, i] + bias[i]) (kernels::GeluErf), rows split over `pool`.
// x: [m, n]; bias: [n].
void AddBiasGeluErf(const float* bias, int64_t m, int64_t n, ThreadPool& pool, float* x);

}  // namespace vllm
