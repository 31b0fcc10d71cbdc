// AVX-512 path (F, BW, VL, VNNI, BF16). Each W row is dotted with up to kXRowsPerPass rows of x
// while its data is in registers; per x row the arithmetic is the same whatever the pass size,
// so results do not depend on the batch.
// Integer weights in place (rows not in groups of 16, so not packed) go through the shared
// decoded kernel with 256-bit vpdpbusd.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/decoded_rows_avx2.h"
#include "kernels/cpu/linear_rows.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

constexpr int kXRowsPerPass = 8;  // then passes of 4, then single rows

// The float paths keep kChains accumulators per x row, used in turn chunk by chunk, so one
// row's FMA chain does not wait on its own latency; the pattern depends only on cols.
constexpr int kChains = 4;

inline __m512 SumChains(const __m512 (&chains)[kChains]) {
  return _mm512_add_ps(_mm512_add_ps(chains[0], chains[1]), _mm512_add_ps(chains[2], chains[3]));
}

inline __mmask16 TailMask16(int64_t remaining) {
  return static_cast<__mmask16>((1u << remaining) - 1);
}

template <int R, typename LoadWeights>
void DotFloatWeights(const PreparedActivations& x, int64_t first_x_row, LoadWeights load,
                     float* out) {
  const int64_t cols = x.cols;
  const float* xr[R];
  __m512 acc[R][kChains];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    xr[r] = x.f32 + (first_x_row + r) * cols;
    for (auto& chain : acc[r]) chain = _mm512_setzero_ps();
  }
  int64_t c = 0;
  auto step = [&](int chain, int64_t col) {
    const __m512 wv = load(col, 0xffff);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      acc[r][chain] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(xr[r] + col), acc[r][chain]);
    }
  };
  for (; c + 16 * kChains <= cols; c += 16 * kChains) {
#pragma GCC unroll 4
    for (int chain = 0; chain < kChains; ++chain) step(chain, c + 16 * chain);
  }
  for (int chain = 0; c + 16 <= cols; c += 16, ++chain) step(chain, c);
  if (c < cols) {
    const __mmask16 mask = TailMask16(cols - c);
    const __m512 wv = load(c, mask);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      acc[r][0] = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(mask, xr[r] + c), acc[r][0]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) out[r] = _mm512_reduce_add_ps(SumChains(acc[r]));
}

template <int R>
void DotF32(const float* w, const PreparedActivations& x, int64_t first_x_row, float* out) {
  DotFloatWeights<R>(
      x, first_x_row, [w](int64_t c, __mmask16 mask) { return _mm512_maskz_loadu_ps(mask, w + c); },
      out);
}

template <int R>
void DotF16(const uint16_t* w, const PreparedActivations& x, int64_t first_x_row, float* out) {
  DotFloatWeights<R>(
      x, first_x_row,
      [w](int64_t c, __mmask16 mask) {
        return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, w + c));
      },
      out);
}

// vdpbf16ps: 32 bf16 products per instruction, pairs summed into 16 f32 lanes.
template <int R>
void DotBf16(const uint16_t* w, const PreparedActivations& x, int64_t first_x_row, float* out) {
  const int64_t cols = x.cols;
  const uint16_t* xr[R];
  __m512 acc[R][kChains];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    xr[r] = x.bf16.data() + (first_x_row + r) * cols;
    for (auto& chain : acc[r]) chain = _mm512_setzero_ps();
  }
  int64_t c = 0;
  auto step = [&](int chain, int64_t col) {
    const __m512i wv = _mm512_loadu_si512(w + col);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      acc[r][chain] =
          _mm512_dpbf16_ps(acc[r][chain], (__m512bh)_mm512_loadu_si512(xr[r] + col), (__m512bh)wv);
    }
  };
  for (; c + 32 * kChains <= cols; c += 32 * kChains) {
#pragma GCC unroll 4
    for (int chain = 0; chain < kChains; ++chain) step(chain, c + 32 * chain);
  }
  for (int chain = 0; c + 32 <= cols; c += 32, ++chain) step(chain, c);
  if (c < cols) {
    const __mmask32 mask = static_cast<__mmask32>((uint64_t{1} << (cols - c)) - 1);
    const __m512i wv = _mm512_maskz_loadu_epi16(mask, w + c);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], (__m512bh)_mm512_maskz_loadu_epi16(mask, xr[r] + c),
                                   (__m512bh)wv);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) out[r] = _mm512_reduce_add_ps(SumChains(acc[r]));
}

}  // namespace

void LinearRowsFloatAvx512(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                           int64_t row_end, float* y) {
  LinearFloatRowsTiled<kXRowsPerPass, kXRowsPerPass / 2, 1>(
      w, x, row_begin, row_end, y,
      []<GgmlType kType, int R>(const uint8_t* row, const PreparedActivations& xs, int64_t i,
                                float* out) {
        if constexpr (kType == GgmlType::kF32) {
          DotF32<R>(reinterpret_cast<const float*>(row), xs, i, out);
        } else if constexpr (kType == GgmlType::kF16) {
          DotF16<R>(reinterpret_cast<const uint16_t*>(row), xs, i, out);
        } else {
          DotBf16<R>(reinterpret_cast<const uint16_t*>(row), xs, i, out);
        }
      });
}

void LinearRowsDecodedAvx512(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                             int64_t row_end, float* y) {
  DecodedRows<DecodedChunk256>(
      w, x, row_begin, row_end, y, [](__m256i w_abs, __m256i wq, __m256i xq) {
        return _mm256_dpbusd_epi32(_mm256_setzero_si256(), w_abs, _mm256_sign_epi8(xq, wq));
      });
}

float DotF32Avx512(const float* a, const float* b, int64_t n) {
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
    acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, a + i), _mm512_maskz_loadu_ps(mask, b + i),
                          acc);
  }
  return _mm512_reduce_add_ps(acc);
}

void AxpyF32Avx512(float alpha, const float* x, int64_t n, float* y) {
  const __m512 scale = _mm512_set1_ps(alpha);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, mask,
                          _mm512_fmadd_ps(scale, _mm512_maskz_loadu_ps(mask, x + i),
                                          _mm512_maskz_loadu_ps(mask, y + i)));
  }
}

// The rows variants keep b / x in registers across rows when n <= 64 (a head's width); each row
// follows exactly DotF32Avx512 / AxpyF32Avx512's arithmetic.
void DotF32RowsAvx512(const float* a, int64_t num_rows, const float* b, int64_t n, float* out) {
  if (n > 64) {
    for (int64_t r = 0; r < num_rows; ++r) out[r] = DotF32Avx512(a + r * n, b, n);
    return;
  }
  __m512 bv[4];
  __mmask16 masks[4];
  const int chunks = static_cast<int>((n + 15) / 16);
  for (int c = 0; c < chunks; ++c) {
    const int64_t i = 16 * c;
    masks[c] = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
    bv[c] = _mm512_maskz_loadu_ps(masks[c], b + i);
  }
  for (int64_t r = 0; r < num_rows; ++r) {
    const float* row = a + r * n;
    __m512 acc = _mm512_setzero_ps();
    for (int c = 0; c < chunks; ++c) {
      acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(masks[c], row + 16 * c), bv[c], acc);
    }
    out[r] = _mm512_reduce_add_ps(acc);
  }
}

void AxpyF32RowsAvx512(const float* alphas, int64_t num_rows, const float* x, int64_t n, float* y) {
  if (n > 64) {
    for (int64_t r = 0; r < num_rows; ++r) AxpyF32Avx512(alphas[r], x, n, y + r * n);
    return;
  }
  __m512 xv[4];
  __mmask16 masks[4];
  const int chunks = static_cast<int>((n + 15) / 16);
  for (int c = 0; c < chunks; ++c) {
    const int64_t i = 16 * c;
    masks[c] = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
    xv[c] = _mm512_maskz_loadu_ps(masks[c], x + i);
  }
  for (int64_t r = 0; r < num_rows; ++r) {
    const __m512 scale = _mm512_set1_ps(alphas[r]);
    float* row = y + r * n;
    for (int c = 0; c < chunks; ++c) {
      _mm512_mask_storeu_ps(
          row + 16 * c, masks[c],
          _mm512_fmadd_ps(scale, xv[c], _mm512_maskz_loadu_ps(masks[c], row + 16 * c)));
    }
  }
}

}  // namespace vllm::kernels
