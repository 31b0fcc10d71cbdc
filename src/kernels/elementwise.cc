// Small vector kernels: RMSNorm, SiLU·up, GELU·up, GELU (erf), dot and axpy, each dispatched per
// ISA.
#include <cmath>
#include <vector>

#include "kernels/linear_internal.h"
#include "kernels/ops.h"
#include "kernels/row_conversions.h"

namespace vllm::kernels {

void RmsNormScalar(const float* x, const float* weight, int64_t m, int64_t n, float eps,
                   float* out) {
  // Σ x² in double (each square is exact there), in kSums running sums of the values i mod kSums
  // then added pairwise: independent chains, which the compiler may also vectorize; the same
  // order on every CPU.
  constexpr int64_t kSums = 8;
  for (int64_t r = 0; r < m; ++r) {
    const float* row = x + r * n;
    float* out_row = out + r * n;
    double sums[kSums] = {};
    int64_t i = 0;
    for (; i + kSums <= n; i += kSums) {
      for (int64_t k = 0; k < kSums; ++k) sums[k] += double{row[i + k]} * row[i + k];
    }
    for (; i < n; ++i) sums[i % kSums] += double{row[i]} * row[i];
    for (int64_t width = kSums / 2; width > 0; width /= 2) {
      for (int64_t k = 0; k < width; ++k) sums[k] += sums[k + width];
    }
    const double sum_squares = sums[0];
    const float scale = 1.0f / std::sqrt(static_cast<float>(sum_squares / n) + eps);
    for (int64_t j = 0; j < n; ++j) out_row[j] = row[j] * scale * weight[j];
  }
}

void RmsNorm(const float* x, const float* weight, int64_t m, int64_t n, float eps, float* out) {
  if (BestIsa() == Isa::kAvx512) return RmsNormAvx512(x, weight, m, n, eps, out);
  RmsNormScalar(x, weight, m, n, eps, out);
}

void SiluMulScalar(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void GeluTanhMulScalar(const float* gate, const float* up, int64_t n, float* out) {
  const float sqrt_2_over_pi = 0.7978845608028654f;
  for (int64_t i = 0; i < n; ++i) {
    const float x = gate[i];
    out[i] = 0.5f * x * (1.0f + std::tanh(sqrt_2_over_pi * x * (1.0f + 0.044715f * x * x))) * up[i];
  }
}

void GeluErfScalar(const float* x, int64_t n, float* out) {
  const float inv_sqrt2 = 0.70710678118654752f;
  for (int64_t i = 0; i < n; ++i) out[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * inv_sqrt2));
}

void SiluMul(const float* gate, const float* up, int64_t n, float* out) {
  switch (BestIsa()) {
    case Isa::kAvx512:
      return SiluMulAvx512(gate, up, n, out);
    case Isa::kAvx2:
      return SiluMulAvx2(gate, up, n, out);
    case Isa::kNeon:
    case Isa::kNeonDotprod:
    case Isa::kNeonI8mm:
      return SiluMulNeon(gate, up, n, out);
    case Isa::kScalar:
      return SiluMulScalar(gate, up, n, out);
  }
}

void GeluTanhMul(const float* gate, const float* up, int64_t n, float* out) {
  switch (BestIsa()) {
    case Isa::kAvx512:
      return GeluTanhMulAvx512(gate, up, n, out);
    case Isa::kAvx2:
      return GeluTanhMulAvx2(gate, up, n, out);
    case Isa::kNeon:
    case Isa::kNeonDotprod:
    case Isa::kNeonI8mm:
      return GeluTanhMulNeon(gate, up, n, out);
    case Isa::kScalar:
      return GeluTanhMulScalar(gate, up, n, out);
  }
}

void GateTimesUp(GateActivation act, const float* gate, const float* up, int64_t n, float* out) {
  if (act == GateActivation::kSilu) return SiluMul(gate, up, n, out);
  GeluTanhMul(gate, up, n, out);
}

void GeluErf(const float* x, int64_t n, float* out) {
  switch (BestIsa()) {
    case Isa::kAvx512:
      return GeluErfAvx512(x, n, out);
    case Isa::kAvx2:
      return GeluErfAvx2(x, n, out);
    case Isa::kNeon:
    case Isa::kNeonDotprod:
    case Isa::kNeonI8mm:
      return GeluErfNeon(x, n, out);
    case Isa::kScalar:
      return GeluErfScalar(x, n, out);
  }
}

float DotF32(const float* a, const float* b, int64_t n) {
  switch (BestIsa()) {
    case Isa::kAvx512:
      return DotF32Avx512(a, b, n);
    case Isa::kAvx2:
      return DotF32Avx2(a, b, n);
    case Isa::kNeon:
    case Isa::kNeonDotprod:
    case Isa::kNeonI8mm:
      return DotF32Neon(a, b, n);
    case Isa::kScalar:
      break;
  }
  return DotF32Scalar(a, b, n);
}

void AxpyF32(float alpha, const float* x, int64_t n, float* y) {
  switch (BestIsa()) {
    case Isa::kAvx512:
      return AxpyF32Avx512(alpha, x, n, y);
    case Isa::kAvx2:
      return AxpyF32Avx2(alpha, x, n, y);
    case Isa::kNeon:
    case Isa::kNeonDotprod:
    case Isa::kNeonI8mm:
      return AxpyF32Neon(alpha, x, n, y);
    case Isa::kScalar:
      break;
  }
  AxpyF32Scalar(alpha, x, n, y);
}

void DotF32Rows(const float* a, int64_t num_rows, const float* b, int64_t n, float* out) {
  if (BestIsa() == Isa::kAvx512) return DotF32RowsAvx512(a, num_rows, b, n, out);
  for (int64_t r = 0; r < num_rows; ++r) out[r] = DotF32(a + r * n, b, n);
}

void AxpyF32Rows(const float* alphas, int64_t num_rows, const float* x, int64_t n, float* y) {
  if (BestIsa() == Isa::kAvx512) return AxpyF32RowsAvx512(alphas, num_rows, x, n, y);
  for (int64_t r = 0; r < num_rows; ++r) AxpyF32(alphas[r], x, n, y + r * n);
}

void DotBf16Rows(const uint16_t* a, int64_t num_rows, const float* b, int64_t n, float* out) {
  if (BestIsa() == Isa::kAvx512) return DotBf16RowsAvx512(a, num_rows, b, n, out);
  // Other paths widen each row (exact) and dot it as DotF32 does.
  thread_local std::vector<float> widened;
  widened.resize(n);
  for (int64_t r = 0; r < num_rows; ++r) {
    DequantizeRowBf16(a + r * n, n, widened.data());
    out[r] = DotF32(widened.data(), b, n);
  }
}

void AxpyBf16(float alpha, const uint16_t* x, int64_t n, float* y) {
  if (BestIsa() == Isa::kAvx512) return AxpyBf16Avx512(alpha, x, n, y);
  thread_local std::vector<float> widened;
  widened.resize(n);
  DequantizeRowBf16(x, n, widened.data());
  AxpyF32(alpha, widened.data(), n, y);
}

}  // namespace vllm::kernels
