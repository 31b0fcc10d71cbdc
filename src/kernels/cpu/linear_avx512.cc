// AVX-512 path (F, BW, VL, VNNI, BF16). Each W row is dotted with up to kXRowsPerPass rows of x
// while its data is in registers; per x row the arithmetic is the same whatever the pass size,
// so results do not depend on the batch.
//
// Quantized weights use vpdpbusd (unsigned × signed bytes). x is stored biased, u = q + 128, and
// the bias is cancelled per W block: Σ u·w = Σ q·w + 128 Σ w, so the accumulator starts at
// -128 Σ w (itself one vpdpbusd of 0x80 bytes with w, shared by all x rows). Q4_0 nibbles are
// unpacked to signed w = nibble - 8 first, after which both types share the same inner step.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/decoded_rows.h"
#include "kernels/cpu/linear_rows.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

constexpr int64_t kPrefetchBytes = 2048;
constexpr int kXRowsPerPass = 8;  // then passes of 4, then single rows

// Two consecutive Q8_0 blocks' 64 quants.
inline __m512i LoadWeightPair(const BlockQ8_0* w, int64_t b) {
  __m256i first = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qs));
  __m256i second = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b + 1].qs));
  return _mm512_inserti64x4(_mm512_castsi256_si512(first), second, 1);
}
inline __m256i LoadWeightBlock(const BlockQ8_0* w, int64_t b) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qs));
}

// One Q4_0 block's 16 bytes → 32 signed values in element order (low nibbles are elements
// 0..15, high nibbles 16..31).
inline __m256i UnpackQ4(__m128i packed) {
  const __m128i low_mask = _mm_set1_epi8(0x0f);
  __m128i low = _mm_and_si128(packed, low_mask);
  __m128i high = _mm_and_si128(_mm_srli_epi16(packed, 4), low_mask);
  __m256i values = _mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1);
  return _mm256_sub_epi8(values, _mm256_set1_epi8(8));
}
inline __m512i LoadWeightPair(const BlockQ4_0* w, int64_t b) {
  __m256i first = UnpackQ4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].qs)));
  __m256i second = UnpackQ4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b + 1].qs)));
  return _mm512_inserti64x4(_mm512_castsi256_si512(first), second, 1);
}
inline __m256i LoadWeightBlock(const BlockQ4_0* w, int64_t b) {
  return UnpackQ4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].qs)));
}

// out[r] = W row · x row (first_x_row + r), for Q8_0 / Q4_0 weights.
template <int R, typename Block>
void DotQuantized(const Block* w, const PreparedActivations& x, int64_t first_x_row, float* out) {
  const int64_t cols = x.cols;
  const int64_t num_blocks = cols / 32;
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  // Lanes 0-7 take the first block's scale, lanes 8-15 the second's.
  const __m512i pair_index = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  const uint8_t* xq[R];
  const float* xs[R];
  const float* x_scale_lanes[R];
  __m512 acc[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    xq[r] = x.q8_biased.data() + (first_x_row + r) * cols;
    xs[r] = x.q8_scales.data() + (first_x_row + r) * num_blocks;
    x_scale_lanes[r] = x.q8_scale_lanes.data() + (first_x_row + r) * (num_blocks / 2) * 16;
    acc[r] = _mm512_setzero_ps();
  }
  int64_t b = 0;
  for (; b + 2 <= num_blocks; b += 2) {
    // Weights stream from memory at small batch sizes: ask for them ~1 KiB ahead (rows are
    // contiguous, so this runs on into the next row).
    // (A single x row streams fast enough on the hardware prefetcher alone.)
    if constexpr (R > 1) {
      _mm_prefetch(reinterpret_cast<const char*>(w + b) + kPrefetchBytes, _MM_HINT_T0);
    }
    const __m512i wq = LoadWeightPair(w, b);
    const __m512i start = _mm512_sub_epi32(_mm512_setzero_si512(),
                                           _mm512_dpbusd_epi32(_mm512_setzero_si512(), bias, wq));
    const __m512 w_scales = _mm512_permutexvar_ps(
        pair_index,
        _mm512_castps128_ps512(_mm_set_ps(0.0f, 0.0f, _cvtsh_ss(w[b + 1].d), _cvtsh_ss(w[b].d))));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512i dots = _mm512_dpbusd_epi32(start, _mm512_loadu_si512(xq[r] + b * 32), wq);
      const __m512 scales = _mm512_mul_ps(w_scales, _mm512_loadu_ps(x_scale_lanes[r] + b * 8));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dots), scales, acc[r]);
    }
  }
  float tail[R] = {};
  if (b < num_blocks) {  // an odd block count leaves one block
    const __m256i wq = LoadWeightBlock(w, b);
    const __m256i start = _mm256_sub_epi32(
        _mm256_setzero_si256(),
        _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(static_cast<char>(0x80)), wq));
    const float w_scale = _cvtsh_ss(w[b].d);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256i dots = _mm256_dpbusd_epi32(
          start, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq[r] + b * 32)), wq);
      tail[r] =
          SumLanes256(_mm256_mul_ps(_mm256_cvtepi32_ps(dots), _mm256_set1_ps(w_scale * xs[r][b])));
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) out[r] = _mm512_reduce_add_ps(acc[r]) + tail[r];
}

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

// The tiled loop over a W row dot function `dot<R>(row bytes, x, first x row, out)`.
template <typename Dot>
void Rows(const WeightView& w, const PreparedActivations& x, int64_t row_begin, int64_t row_end,
          float* y, const Dot& dot) {
  LinearRowsTiled<kXRowsPerPass, kXRowsPerPass / 2, 1>(
      w, x, row_begin, row_end, y, [&]<int R>(int64_t j, int64_t i, float* out) {
        dot.template operator()<R>(w.data + j * w.row_bytes, x, i, out);
      });
}

}  // namespace

void LinearRowsF32Avx512(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                         int64_t row_end, float* y) {
  Rows(w, x, row_begin, row_end, y,
       []<int R>(const uint8_t* row, const PreparedActivations& xs, int64_t i, float* out) {
         DotF32<R>(reinterpret_cast<const float*>(row), xs, i, out);
       });
}

void LinearRowsF16Avx512(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                         int64_t row_end, float* y) {
  Rows(w, x, row_begin, row_end, y,
       []<int R>(const uint8_t* row, const PreparedActivations& xs, int64_t i, float* out) {
         DotF16<R>(reinterpret_cast<const uint16_t*>(row), xs, i, out);
       });
}

void LinearRowsBf16Avx512(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                          int64_t row_end, float* y) {
  Rows(w, x, row_begin, row_end, y,
       []<int R>(const uint8_t* row, const PreparedActivations& xs, int64_t i, float* out) {
         DotBf16<R>(reinterpret_cast<const uint16_t*>(row), xs, i, out);
       });
}

void LinearRowsQ8_0Avx512(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                          int64_t row_end, float* y) {
  Rows(w, x, row_begin, row_end, y,
       []<int R>(const uint8_t* row, const PreparedActivations& xs, int64_t i, float* out) {
         DotQuantized<R>(reinterpret_cast<const BlockQ8_0*>(row), xs, i, out);
       });
}

void LinearRowsQ4_0Avx512(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                          int64_t row_end, float* y) {
  Rows(w, x, row_begin, row_end, y,
       []<int R>(const uint8_t* row, const PreparedActivations& xs, int64_t i, float* out) {
         DotQuantized<R>(reinterpret_cast<const BlockQ4_0*>(row), xs, i, out);
       });
}

void LinearRowsDecodedAvx512(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                             int64_t row_end, float* y) {
  DecodedRows(w, x, row_begin, row_end, y, [](__m256i w_abs, __m256i wq, __m256i xq) {
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
