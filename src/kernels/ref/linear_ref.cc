// Scalar reference for Linear: plain loops, one output element at a time, in f32 (blocks summed
// in order). The SIMD paths are tested against this.
#include "common/half.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

float DotRowScalar(const WeightView& w, const uint8_t* w_row, const PreparedActivations& x,
                   int64_t i) {
  const int64_t cols = w.cols;
  float sum = 0.0f;
  switch (w.type) {
    case GgmlType::kF32: {
      const auto* weights = reinterpret_cast<const float*>(w_row);
      const float* xr = x.f32 + i * cols;
      for (int64_t c = 0; c < cols; ++c) sum += weights[c] * xr[c];
      return sum;
    }
    case GgmlType::kF16: {
      const auto* weights = reinterpret_cast<const uint16_t*>(w_row);
      const float* xr = x.f32 + i * cols;
      for (int64_t c = 0; c < cols; ++c) sum += Fp16ToFp32(weights[c]) * xr[c];
      return sum;
    }
    case GgmlType::kBF16: {
      const auto* weights = reinterpret_cast<const uint16_t*>(w_row);
      const float* xr = x.bf16_as_f32.data() + i * cols;
      for (int64_t c = 0; c < cols; ++c) sum += Bf16ToFp32(weights[c]) * xr[c];
      return sum;
    }
    case GgmlType::kQ8_0: {
      const auto* blocks = reinterpret_cast<const BlockQ8_0*>(w_row);
      const BlockQ8_0* xb = x.q8.data() + i * (cols / kQuantBlockSize);
      for (int64_t b = 0; b < cols / kQuantBlockSize; ++b) {
        int32_t dot = 0;
        for (int k = 0; k < kQuantBlockSize; ++k) dot += blocks[b].qs[k] * xb[b].qs[k];
        sum += static_cast<float>(dot) * (Fp16ToFp32(blocks[b].d) * Fp16ToFp32(xb[b].d));
      }
      return sum;
    }
    case GgmlType::kQ4_0: {
      const auto* blocks = reinterpret_cast<const BlockQ4_0*>(w_row);
      const BlockQ8_0* xb = x.q8.data() + i * (cols / kQuantBlockSize);
      for (int64_t b = 0; b < cols / kQuantBlockSize; ++b) {
        int32_t dot = 0;
        for (int k = 0; k < kQuantBlockSize / 2; ++k) {
          dot += ((blocks[b].qs[k] & 0x0f) - 8) * xb[b].qs[k];
          dot += ((blocks[b].qs[k] >> 4) - 8) * xb[b].qs[k + 16];
        }
        sum += static_cast<float>(dot) * (Fp16ToFp32(blocks[b].d) * Fp16ToFp32(xb[b].d));
      }
      return sum;
    }
    default:
      return 0.0f;
  }
}

}  // namespace

void LinearRowsScalar(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                      int64_t row_end, float* y) {
  for (int64_t j = row_begin; j < row_end; ++j) {
    const uint8_t* w_row = w.data + j * w.row_bytes;
    for (int64_t i = 0; i < x.m; ++i) y[i * w.rows + j] = DotRowScalar(w, w_row, x, i);
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
