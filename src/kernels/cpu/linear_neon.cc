// The NEON tier (baseline ARMv8-A, every aarch64 CPU): integer types in place with widening
// multiplies, F32 / F16 / BF16 rows with f32 FMAs. Like the x86 paths, each W row meets up to
// kXRowsPerPass x rows while loaded, with per-row arithmetic independent of the pass size.
#include <arm_neon.h>

#include "kernels/cpu/decoded_rows_neon.h"
#include "kernels/cpu/lanes_neon.h"
#include "kernels/cpu/linear_rows.h"
#include "kernels/float_weight.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

constexpr int kXRowsPerPass = 4;

// 8 weights as f32 from f32, f16 or bf16 storage.
inline float32x4x2_t Load8(const float* w) { return {vld1q_f32(w), vld1q_f32(w + 4)}; }
inline float32x4x2_t Load8(const uint16_t* w, GgmlType type) {
  const uint16x8_t bits = vld1q_u16(w);
  if (type == GgmlType::kF16) {
    const float16x8_t halves = vreinterpretq_f16_u16(bits);
    return {vcvt_f32_f16(vget_low_f16(halves)), vcvt_high_f32_f16(halves)};
  }
  // bf16: the upper half of an f32.
  return {vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(bits), 16)),
          vreinterpretq_f32_u32(vshll_high_n_u16(bits, 16))};
}

// W row (F32 / F16 / BF16) against x rows [i, i + R) (for BF16: x already rounded to bf16), two
// f32x4 accumulators per x row. Columns past the last multiple of 8 are added in order after the
// vector sum.
template <int R>
void DotFloat(const uint8_t* row, GgmlType type, const float* x_rows, int64_t cols, float* out) {
  float32x4_t acc[R][2];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = vdupq_n_f32(0.0f);
  const int64_t vector_cols = cols / 8 * 8;
  for (int64_t c = 0; c < vector_cols; c += 8) {
    const float32x4x2_t wv = type == GgmlType::kF32
                                 ? Load8(reinterpret_cast<const float*>(row) + c)
                                 : Load8(reinterpret_cast<const uint16_t*>(row) + c, type);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const float* xr = x_rows + r * cols + c;
      acc[r][0] = vfmaq_f32(acc[r][0], wv.val[0], vld1q_f32(xr));
      acc[r][1] = vfmaq_f32(acc[r][1], wv.val[1], vld1q_f32(xr + 4));
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float sum = vaddvq_f32(vaddq_f32(acc[r][0], acc[r][1]));
    for (int64_t c = vector_cols; c < cols; ++c)
      sum += FloatWeightAt(type, row, c) * x_rows[r * cols + c];
    out[r] = sum;
  }
}

}  // namespace

void LinearRowsFloatNeon(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                         int64_t row_end, float* y) {
  const GgmlType type = w.traits->layout.type;
  const float* x_values = type == GgmlType::kBF16 ? x.bf16_as_f32.data() : x.f32;
  LinearRowsTiled<kXRowsPerPass, 1>(
      w, x, row_begin, row_end, y, [&]<int R>(int64_t j, int64_t i, float* out) {
        DotFloat<R>(w.data + j * w.row_bytes, type, x_values + i * x.cols, x.cols, out);
      });
}

// Without SDOT: 8 × 8 → 16-bit products (|w·x| ≤ 128 · 127 fits), pairs added into int32 lanes.
void LinearRowsDecodedNeon(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                           int64_t row_end, float* y) {
  DecodedRows<DecodedChunkNeon>(w, x, row_begin, row_end, y, [](int8x16_t wq, int8x16_t xq) {
    const int16x8_t low = vmull_s8(vget_low_s8(wq), vget_low_s8(xq));
    const int16x8_t high = vmull_high_s8(wq, xq);
    return vaddvq_s32(vpadalq_s16(vpaddlq_s16(low), high));
  });
}

float DotF32Neon(const float* a, const float* b, int64_t n) { return DotLanes<NeonLanes>(a, b, n); }

void AxpyF32Neon(float alpha, const float* x, int64_t n, float* y) {
  AxpyLanes<NeonLanes>(alpha, x, n, y);
}

}  // namespace vllm::kernels
