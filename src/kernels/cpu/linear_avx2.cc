// AVX2 + FMA + F16C path. Like the AVX-512 path, each W row meets up to kXRowsPerPass x rows
// while loaded, with per-row arithmetic independent of the pass size.
//
// Quantized weights: vpmaddubsw multiplies unsigned by signed bytes, so the sign of w moves onto
// x (|w| · sign(x, w)); |w| ≤ 127 keeps the pairwise int16 sums from saturating.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/decoded_rows_avx2.h"
#include "kernels/cpu/lanes_avx2.h"
#include "kernels/cpu/linear_rows.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

constexpr int kXRowsPerPass = 4;

inline __m256i LoadWeightBlock(const BlockQ8_0& block) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block.qs));
}
// Q4_0 nibbles → 32 signed values (nibble - 8) in element order.
inline __m256i LoadWeightBlock(const BlockQ4_0& block) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block.qs));
  const __m128i low_mask = _mm_set1_epi8(0x0f);
  __m128i low = _mm_and_si128(packed, low_mask);
  __m128i high = _mm_and_si128(_mm_srli_epi16(packed, 4), low_mask);
  __m256i values = _mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1);
  return _mm256_sub_epi8(values, _mm256_set1_epi8(8));
}

template <int R, typename Block>
void DotQuantized(const Block* w, const PreparedActivations& x, int64_t first_x_row, float* out) {
  const int64_t num_blocks = x.cols / 32;
  const __m256i ones = _mm256_set1_epi16(1);
  const BlockQ8_0* xb[R];
  __m256 acc[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    xb[r] = x.q8.data() + (first_x_row + r) * num_blocks;
    acc[r] = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
    const __m256i wq = LoadWeightBlock(w[b]);
    const __m256i w_abs = _mm256_sign_epi8(wq, wq);
    const float w_scale = _cvtsh_ss(w[b].d);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb[r][b].qs));
      const __m256i pairs = _mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(xq, wq));
      const __m256 dots = _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, ones));
      acc[r] = _mm256_fmadd_ps(dots, _mm256_set1_ps(w_scale * _cvtsh_ss(xb[r][b].d)), acc[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) out[r] = SumLanes256(acc[r]);
}

// Loads 8 weights as f32 from f32, f16 or bf16 storage.
inline __m256 Load8(const float* w) { return _mm256_loadu_ps(w); }
inline __m256 LoadF16x8(const uint16_t* w) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
}
inline __m256 LoadBf16x8(const uint16_t* w) {
  const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}

// F32 / F16 / BF16 weights against f32 x (for BF16: x already rounded to bf16). Columns past the
// last multiple of 8 are added in order after the vector sum.
template <int R, typename Weight, typename LoadFn, typename ScalarFn>
void DotFloat(const Weight* w, const float* x_rows, int64_t cols, LoadFn load, ScalarFn to_float,
              float* out) {
  __m256 acc[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  const int64_t vector_cols = cols / 8 * 8;
  for (int64_t c = 0; c < vector_cols; c += 8) {
    const __m256 wv = load(w + c);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      acc[r] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x_rows + r * cols + c), acc[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float sum = SumLanes256(acc[r]);
    for (int64_t c = vector_cols; c < cols; ++c) sum += to_float(w[c]) * x_rows[r * cols + c];
    out[r] = sum;
  }
}

float Bf16BitsToFloat(uint16_t v) {
  return _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(v << 16)));
}

}  // namespace

void LinearRowsFloatAvx2(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                         int64_t row_end, float* y) {
  LinearFloatRowsTiled<kXRowsPerPass, 1>(
      w, x, row_begin, row_end, y,
      []<GgmlType kType, int R>(const uint8_t* row, const PreparedActivations& xs, int64_t i,
                                float* out) {
        if constexpr (kType == GgmlType::kF32) {
          DotFloat<R>(
              reinterpret_cast<const float*>(row), xs.f32 + i * xs.cols, xs.cols, Load8,
              [](float v) { return v; }, out);
        } else if constexpr (kType == GgmlType::kF16) {
          DotFloat<R>(
              reinterpret_cast<const uint16_t*>(row), xs.f32 + i * xs.cols, xs.cols, LoadF16x8,
              [](uint16_t v) { return _cvtsh_ss(v); }, out);
        } else {
          DotFloat<R>(reinterpret_cast<const uint16_t*>(row), xs.bf16_as_f32.data() + i * xs.cols,
                      xs.cols, LoadBf16x8, Bf16BitsToFloat, out);
        }
      });
}

// Q8_0 and Q4_0 in place: their blocks as stored (not through DecodedBlock) against x's Q8_0.
void LinearRowsQ8_0Q4_0Avx2(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                            int64_t row_end, float* y) {
  const auto rows = [&]<typename Block>() {
    LinearRowBytesTiled<kXRowsPerPass, 1>(
        w, x, row_begin, row_end, y,
        []<int R>(const uint8_t* row, const PreparedActivations& xs, int64_t i, float* out) {
          DotQuantized<R>(reinterpret_cast<const Block*>(row), xs, i, out);
        });
  };
  if (w.traits->layout.type == GgmlType::kQ4_0) return rows.template operator()<BlockQ4_0>();
  rows.template operator()<BlockQ8_0>();
}

void LinearRowsDecodedAvx2(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                           int64_t row_end, float* y) {
  const __m256i ones = _mm256_set1_epi16(1);
  DecodedRows<DecodedChunk256>(
      w, x, row_begin, row_end, y, [ones](__m256i w_abs, __m256i wq, __m256i xq) {
        return _mm256_madd_epi16(_mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(xq, wq)), ones);
      });
}

float DotF32Avx2(const float* a, const float* b, int64_t n) { return DotLanes<Avx2Lanes>(a, b, n); }

void AxpyF32Avx2(float alpha, const float* x, int64_t n, float* y) {
  AxpyLanes<Avx2Lanes>(alpha, x, n, y);
}

}  // namespace vllm::kernels
