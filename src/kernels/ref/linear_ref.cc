// Scalar reference for Linear: plain loops in f32, blocks summed in order. The SIMD paths are
// tested against this.
#include <vector>

#include "kernels/float_weight.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {
void LinearRowsFloatScalar(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                           int64_t row_end, float* y) {
  const GgmlType type = w.traits->layout.type;
  const float* x_values = type == GgmlType::kBF16 ? x.bf16_as_f32.data() : x.f32;
  for (int64_t j = row_begin; j < row_end; ++j) {
    const uint8_t* row = w.data + j * w.row_bytes;
    for (int64_t i = 0; i < x.m; ++i) {
      const float* xr = x_values + i * w.cols;
      float sum = 0.0f;
      for (int64_t c = 0; c < w.cols; ++c) sum += FloatWeightAt(type, row, c) * xr[c];
      y[i * w.rows + j] = sum;
    }
  }
}

// Per 32-value chunk c of x (see linear_internal.h):
//   sum  += d_x · Σ_s scale[s] · Σ q·x_q,   mins += d_x · Σ_s min[s] · Σ x_q,   y = sum − mins.
void LinearRowsDecodedScalar(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                             int64_t row_end, float* y) {
  const TypeTraits& traits = *w.traits;
  const int64_t block_size = traits.layout.block_size;
  const int64_t sub_size = traits.sub_block_size;
  const int64_t chunks_per_block = block_size / kQuantBlockSize;
  const int64_t x_blocks_per_row = w.cols / kQuantBlockSize;
  DecodedBlock decoded;
  std::vector<float> sums(x.m), mins(x.m);
  for (int64_t j = row_begin; j < row_end; ++j) {
    const uint8_t* row = w.data + j * w.row_bytes;
    std::fill(sums.begin(), sums.end(), 0.0f);
    std::fill(mins.begin(), mins.end(), 0.0f);
    for (int64_t b = 0; b < w.cols / block_size; ++b) {
      traits.decode(row + b * traits.layout.block_bytes, &decoded);
      for (int64_t c = 0; c < chunks_per_block; ++c) {
        const int64_t xb = b * chunks_per_block + c;
        for (int64_t i = 0; i < x.m; ++i) {
          const BlockQ8_0& xq = x.q8[i * x_blocks_per_row + xb];
          float scaled = 0.0f, min_term = 0.0f;
          for (int64_t s = 32 * c / sub_size; s < 32 * (c + 1) / sub_size; ++s) {
            int32_t dot = 0, x_sum = 0;
            for (int64_t k = s * sub_size; k < (s + 1) * sub_size; ++k) {
              dot += decoded.q[k] * xq.qs[k - 32 * c];
              x_sum += xq.qs[k - 32 * c];
            }
            scaled += decoded.scale[s] * static_cast<float>(dot);
            min_term += decoded.min[s] * static_cast<float>(x_sum);
          }
          const float x_scale = x.q8_scales[i * x_blocks_per_row + xb];
          sums[i] += x_scale * scaled;
          mins[i] += x_scale * min_term;
        }
      }
    }
    for (int64_t i = 0; i < x.m; ++i) y[i * w.rows + j] = sums[i] - mins[i];
  }
}

float DotF32Scalar(const float* a, const float* b, int64_t n) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

void AxpyF32Scalar(float alpha, const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

}  // namespace vllm::kernels
