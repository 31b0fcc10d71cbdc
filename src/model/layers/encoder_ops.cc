#include "model/layers/encoder_ops.h"

#include <cmath>

#include "kernels/ops.h"

namespace vllm {
namespace {

// Partial sums kept side by side, so that the sums over a row vectorize; they are added in a
// fixed order at the end, whatever the row's neighbours.
constexpr int64_t kNumPartialSums = 16;

// Σ values[i] for i < n, in kNumPartialSums interleaved partial sums then a fixed tree.
template <typename Term>
float SumOverRow(int64_t n, const Term& term) {
  float partial[kNumPartialSums] = {};
  int64_t i = 0;
  for (; i + kNumPartialSums <= n; i += kNumPartialSums) {
    for (int64_t j = 0; j < kNumPartialSums; ++j) partial[j] += term(i + j);
  }
  for (; i < n; ++i) partial[i % kNumPartialSums] += term(i);
  for (int64_t width = kNumPartialSums / 2; width > 0; width /= 2) {
    for (int64_t j = 0; j < width; ++j) partial[j] += partial[j + width];
  }
  return partial[0];
}

void LayerNormRow(const float* row, const LayerNormParams& norm, int64_t n, float* result) {
  const float mean = SumOverRow(n, [&](int64_t i) { return row[i]; }) / static_cast<float>(n);
  const float squares = SumOverRow(n, [&](int64_t i) { return (row[i] - mean) * (row[i] - mean); });
  const float inv_std = 1.0f / std::sqrt(squares / static_cast<float>(n) + norm.eps);
  for (int64_t i = 0; i < n; ++i) {
    result[i] = (row[i] - mean) * inv_std * norm.weight[i] + norm.bias[i];
  }
}

}  // namespace

void LayerNorm(const float* x, const LayerNormParams& norm, int64_t m, int64_t n, float* out) {
  for (int64_t r = 0; r < m; ++r) LayerNormRow(x + r * n, norm, n, out + r * n);
}

void AddBiasResidualLayerNorm(const float* y, const float* bias, const LayerNormParams& norm,
                              int64_t m, int64_t n, ThreadPool& pool, float* x) {
  pool.ParallelFor(m, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* row = x + r * n;
      const float* delta = y + r * n;
      for (int64_t i = 0; i < n; ++i) row[i] += delta[i] + bias[i];
      LayerNormRow(row, norm, n, row);
    }
  });
}

void AddBiasGeluErf(const float* bias, int64_t m, int64_t n, ThreadPool& pool, float* x) {
  pool.ParallelFor(m, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* row = x + r * n;
      for (int64_t i = 0; i < n; ++i) row[i] += bias[i];
      kernels::GeluErf(row, n, row);
    }
  });
}

}  // namespace vllm
