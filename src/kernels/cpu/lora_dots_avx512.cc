// DotBf16Rows and AxpyBf16 on AVX-512: bf16 values widened to f32 in registers (a shift of 16
// bits, exact), then exactly DotF32RowsAvx512's / AxpyF32Avx512's arithmetic; and the LoRA
// shrink / expand tiles of several rows at once, each row's arithmetic exactly those.
#include <immintrin.h>

#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

inline __mmask16 ChunkMask(int64_t remaining) {
  if (remaining <= 0) return 0;
  return remaining >= 16 ? static_cast<__mmask16>(0xffff)
                         : static_cast<__mmask16>((1u << remaining) - 1);
}

// 16 bf16 values (masked-off lanes 0) as f32.
inline __m512 LoadBf16(__mmask16 mask, const uint16_t* values) {
  const __m512i widened = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, values));
  return _mm512_castsi512_ps(_mm512_slli_epi32(widened, 16));
}

}  // namespace

void DotBf16RowsAvx512(const uint16_t* a, int64_t num_rows, const float* b, int64_t n, float* out) {
  if (n > 64) {  // DotF32Avx512 per row
    for (int64_t r = 0; r < num_rows; ++r) {
      const uint16_t* row = a + r * n;
      __m512 acc = _mm512_setzero_ps();
      for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 mask = ChunkMask(n - i);
        acc = _mm512_fmadd_ps(LoadBf16(mask, row + i), _mm512_maskz_loadu_ps(mask, b + i), acc);
      }
      out[r] = _mm512_reduce_add_ps(acc);
    }
    return;
  }
  // b stays in registers across rows (the rank of an adapter's B rows).
  __m512 bv[4];
  __mmask16 masks[4];
  const int chunks = static_cast<int>((n + 15) / 16);
  for (int c = 0; c < chunks; ++c) {
    masks[c] = ChunkMask(n - 16 * c);
    bv[c] = _mm512_maskz_loadu_ps(masks[c], b + 16 * c);
  }
  for (int64_t r = 0; r < num_rows; ++r) {
    const uint16_t* row = a + r * n;
    __m512 acc = _mm512_setzero_ps();
    for (int c = 0; c < chunks; ++c) {
      acc = _mm512_fmadd_ps(LoadBf16(masks[c], row + 16 * c), bv[c], acc);
    }
    out[r] = _mm512_reduce_add_ps(acc);
  }
}

void AxpyBf16Avx512(float alpha, const uint16_t* x, int64_t n, float* y) {
  const __m512 scale = _mm512_set1_ps(alpha);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = ChunkMask(n - i);
    _mm512_mask_storeu_ps(
        y + i, mask,
        _mm512_fmadd_ps(scale, LoadBf16(mask, x + i), _mm512_maskz_loadu_ps(mask, y + i)));
  }
}

namespace {

// A rows of the shrink's tile: 4 A rows against up to 4 x rows are 16 independent FMA chains
// (one alone is bound by the FMA latency), each A chunk widened once for all x rows.
constexpr int kShrinkTileRanks = 4;
// Output columns of the expand's tile: 4 registers per row, 16 accumulators over 4 rows.
constexpr int kExpandTileChunks = 4;
// How far ahead the tiles ask for the next lines of A's rows and of Bᵀ's rows (elements), which
// they read side by side a row apart: measured faster than leaving them to the prefetchers.
constexpr int64_t kShrinkPrefetchAhead = 512;
constexpr int64_t kExpandPrefetchAhead = 256;
// The tiles' loops over rows, A rows and chunks are unrolled (#pragma GCC unroll), so that their
// accumulators stay in registers.

inline void Prefetch(const uint16_t* address) {
  _mm_prefetch(reinterpret_cast<const char*>(address), _MM_HINT_T0);
}

// t[k * rank + r] for r in [r_begin, r_begin + kRanks): row r of A dotted with x row k, with
// DotBf16RowsAvx512's arithmetic (one accumulator per dot over the chunks in order, the partial
// chunk masked, then _mm512_reduce_add_ps).
template <int kRows, int kRanks>
void ShrinkTile(const uint16_t* a, int64_t rank, int64_t r_begin, const float* const* x, int64_t n,
                float* t) {
  __m512 acc[kRows][kRanks];
#pragma GCC unroll 16
  for (int k = 0; k < kRows; ++k) {
#pragma GCC unroll 16
    for (int j = 0; j < kRanks; ++j) acc[k][j] = _mm512_setzero_ps();
  }
  const uint16_t* a_rows = a + r_begin * n;
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = ChunkMask(n - i);
    __m512 av[kRanks];
    if (i % 32 == 0) {  // a line of each row
#pragma GCC unroll 16
      for (int j = 0; j < kRanks; ++j) Prefetch(a_rows + j * n + i + kShrinkPrefetchAhead);
    }
#pragma GCC unroll 16
    for (int j = 0; j < kRanks; ++j) av[j] = LoadBf16(mask, a_rows + j * n + i);
#pragma GCC unroll 16
    for (int k = 0; k < kRows; ++k) {
      const __m512 xv = _mm512_maskz_loadu_ps(mask, x[k] + i);
#pragma GCC unroll 16
      for (int j = 0; j < kRanks; ++j) acc[k][j] = _mm512_fmadd_ps(av[j], xv, acc[k][j]);
    }
  }
#pragma GCC unroll 16
  for (int k = 0; k < kRows; ++k) {
#pragma GCC unroll 16
    for (int j = 0; j < kRanks; ++j) t[k * rank + r_begin + j] = _mm512_reduce_add_ps(acc[k][j]);
  }
}

template <int kRows>
void ShrinkRows(const uint16_t* a, int64_t rank, const float* const* x, int64_t n, float* t) {
  int64_t r = 0;
  for (; r + kShrinkTileRanks <= rank; r += kShrinkTileRanks) {
    ShrinkTile<kRows, kShrinkTileRanks>(a, rank, r, x, n, t);
  }
  for (; r < rank; ++r) ShrinkTile<kRows, 1>(a, rank, r, x, n, t);
}

// y[k][c] += Σ_r t[k * rank + r] · Bᵀ[r, c] over the tile's columns from `col`: the sum from 0 in
// order of r (AxpyBf16Avx512's FMA per r), then added to y (AxpyF32Avx512 with alpha 1).
template <int kRows>
void ExpandRows(const uint16_t* b_transposed, int64_t rank, int64_t out, const float* t,
                float* const* y) {
  for (int64_t col = 0; col < out; col += 16 * kExpandTileChunks) {
    __mmask16 masks[kExpandTileChunks];
    __m512 acc[kRows][kExpandTileChunks];
#pragma GCC unroll 16
    for (int c = 0; c < kExpandTileChunks; ++c) {
      masks[c] = ChunkMask(out - col - 16 * c);
#pragma GCC unroll 16
      for (int k = 0; k < kRows; ++k) acc[k][c] = _mm512_setzero_ps();
    }
    for (int64_t r = 0; r < rank; ++r) {
      const uint16_t* b_row = b_transposed + r * out + col;
      Prefetch(b_row + kExpandPrefetchAhead);  // the two lines of a later tile
      Prefetch(b_row + kExpandPrefetchAhead + 32);
      __m512 bv[kExpandTileChunks];
#pragma GCC unroll 16
      for (int c = 0; c < kExpandTileChunks; ++c) bv[c] = LoadBf16(masks[c], b_row + 16 * c);
#pragma GCC unroll 16
      for (int k = 0; k < kRows; ++k) {
        const __m512 scale = _mm512_set1_ps(t[k * rank + r]);
#pragma GCC unroll 16
        for (int c = 0; c < kExpandTileChunks; ++c) {
          acc[k][c] = _mm512_fmadd_ps(scale, bv[c], acc[k][c]);
        }
      }
    }
#pragma GCC unroll 16
    for (int k = 0; k < kRows; ++k) {
#pragma GCC unroll 16
      for (int c = 0; c < kExpandTileChunks; ++c) {
        float* y_chunk = y[k] + col + 16 * c;
        _mm512_mask_storeu_ps(y_chunk, masks[c],
                              _mm512_add_ps(acc[k][c], _mm512_maskz_loadu_ps(masks[c], y_chunk)));
      }
    }
  }
}

}  // namespace

void LoraShrinkBf16Avx512(const uint16_t* a, int64_t rank, const float* const* x, int num_rows,
                          int64_t n, float* t) {
  switch (num_rows) {
    case 1:
      return ShrinkRows<1>(a, rank, x, n, t);
    case 2:
      return ShrinkRows<2>(a, rank, x, n, t);
    case 3:
      return ShrinkRows<3>(a, rank, x, n, t);
    default:
      return ShrinkRows<4>(a, rank, x, n, t);
  }
}

void LoraExpandBf16Avx512(const uint16_t* b_transposed, int64_t rank, int64_t out, const float* t,
                          float* const* y, int num_rows) {
  switch (num_rows) {
    case 1:
      return ExpandRows<1>(b_transposed, rank, out, t, y);
    case 2:
      return ExpandRows<2>(b_transposed, rank, out, t, y);
    case 3:
      return ExpandRows<3>(b_transposed, rank, out, t, y);
    default:
      return ExpandRows<4>(b_transposed, rank, out, t, y);
  }
}

}  // namespace vllm::kernels
