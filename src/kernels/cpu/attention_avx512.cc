// AttendTile, the AVX-512 build of cpu/attention_tile_impl.h, with the tile's keys transposed
// 16 × 16 at a time in registers and its values converted 16 at a time when they are bf16 or f32
// and head_dim is a multiple of 16, and rows that see the same keys run four at a time.
#include <immintrin.h>

#include <cstdint>

#include "kernels/attention_internal.h"

namespace vllm::kernels {
namespace {
#include "kernels/cpu/attention_tile_impl.h"
#include "kernels/cpu/transpose_avx512.h"

// Whether rows of `rows` convert 16 values at a time below: bf16 or f32, head_dim a multiple of 16.
bool HasSlices(const KvRows& rows, int64_t head_dim) {
  return (rows.dtype == KvCacheDtype::kBFloat16 || rows.dtype == KvCacheDtype::kFloat32) &&
         head_dim % kLanes == 0;
}

// Dimensions [d, d + 16) of row j of `rows` (keys or values) as f32.
__m512 Slice(const KvRows& rows, int j, int64_t d) {
  const uint8_t* row = rows.data + j * rows.row_stride_bytes;
  if (rows.dtype == KvCacheDtype::kFloat32) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + d);
  }
  const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * d));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}

// LoadKeysByRow's kt, written 16 dimensions × 16 keys at a time.
void LoadKeysTransposed(const AttentionTile& tile, int lo, int hi, float* row, float* kt) {
  if (!HasSlices(tile.keys, tile.head_dim)) {
    LoadKeysByRow(tile, lo, hi, row, kt);
    return;
  }
  for (int64_t d = 0; d < tile.head_dim; d += kLanes) {
    __m512 block[16];
    for (int j = 0; j < kLanes; ++j) {
      block[j] = j >= lo && j <= hi ? Slice(tile.keys, j, d) : _mm512_setzero_ps();
    }
    Transpose16x16(block);
    for (int i = 0; i < kLanes; ++i) _mm512_storeu_ps(kt + (d + i) * kLanes, block[i]);
  }
}

// LoadValuesByRow's rows, 16 values at a time (acc_stride is head_dim here: no padding).
void LoadValuesBySlice(const AttentionTile& tile, int lo, int hi, int64_t acc_stride, float* v) {
  if (!HasSlices(tile.values, tile.head_dim)) {
    LoadValuesByRow(tile, lo, hi, acc_stride, v);
    return;
  }
  for (int j = lo; j <= hi; ++j) {
    for (int64_t d = 0; d < tile.head_dim; d += kLanes) {
      _mm512_storeu_ps(v + j * acc_stride + d, Slice(tile.values, j, d));
    }
  }
}

// Query rows that run together when they see the same keys (a token's heads of one KV head, or
// the tokens of a tile that sees all of its keys): each key slice is loaded once for their logits,
// each value slice once for their accumulators. Every row's arithmetic stays AttendRow's.
constexpr int kBlockRows = 4;

// Whether rows [r, r + kBlockRows) exist and all see one same non-empty key range, and head_dim
// is whole slices.
bool IsRowBlock(const AttentionTile& tile, int64_t r) {
  if (r + kBlockRows > tile.num_rows || tile.head_dim % kLanes != 0) return false;
  const int first = tile.first_key[r];
  const int last = tile.last_key[r];
  if (first > last) return false;
  for (int i = 1; i < kBlockRows; ++i) {
    if (tile.first_key[r + i] != first || tile.last_key[r + i] != last) return false;
  }
  return true;
}

// s[i] = TileLogits of query row i of q ([kBlockRows, head_dim]): four partial sums by d mod 4,
// added (s0 + s1) + (s2 + s3).
void BlockLogits(const float* q, int64_t head_dim, const float* kt,
                 float (&s)[kBlockRows][kLanes]) {
  __m512 partial[4][kBlockRows];
#pragma GCC unroll 16
  for (auto& sums : partial) {
#pragma GCC unroll 16
    for (__m512& sum : sums) sum = _mm512_setzero_ps();
  }
  for (int64_t d = 0; d < head_dim; d += 4) {
#pragma GCC unroll 16
    for (int k = 0; k < 4; ++k) {
      const __m512 keys = _mm512_loadu_ps(kt + (d + k) * kLanes);
#pragma GCC unroll 16
      for (int i = 0; i < kBlockRows; ++i) {
        partial[k][i] =
            _mm512_fmadd_ps(_mm512_set1_ps(q[i * head_dim + d + k]), keys, partial[k][i]);
      }
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < kBlockRows; ++i) {
    _mm512_storeu_ps(s[i], _mm512_add_ps(_mm512_add_ps(partial[0][i], partial[1][i]),
                                         _mm512_add_ps(partial[2][i], partial[3][i])));
  }
}

// Dimensions [0, 16 kSlices) of the block's accumulators (row i at acc + i · stride):
// acc · rescale[i] + Σ_{j = first..last} p[i][j] v_j, as AccumulateValues per row.
template <int kSlices>
void BlockAccumulate(const float (&p)[kBlockRows][kLanes], int first, int last, const float* v,
                     int64_t stride, const float (&rescale)[kBlockRows], float* acc) {
  __m512 sums[kBlockRows][kSlices];
#pragma GCC unroll 16
  for (int i = 0; i < kBlockRows; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < kSlices; ++k) {
      sums[i][k] =
          _mm512_mul_ps(_mm512_loadu_ps(acc + i * stride + k * kLanes), _mm512_set1_ps(rescale[i]));
    }
  }
  for (int j = first; j <= last; ++j) {
    __m512 values[kSlices];
#pragma GCC unroll 16
    for (int k = 0; k < kSlices; ++k) values[k] = _mm512_loadu_ps(v + j * stride + k * kLanes);
#pragma GCC unroll 16
    for (int i = 0; i < kBlockRows; ++i) {
      const __m512 weight = _mm512_set1_ps(p[i][j]);
#pragma GCC unroll 16
      for (int k = 0; k < kSlices; ++k) sums[i][k] = _mm512_fmadd_ps(weight, values[k], sums[i][k]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < kBlockRows; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < kSlices; ++k) _mm512_storeu_ps(acc + i * stride + k * kLanes, sums[i][k]);
  }
}

// ReduceMax (reduce = max) or ReduceSum (add) of each of four rows side by side, in its tree
// order (lanes l and l + 8, then l and l + 4, l and l + 2, l and l + 1, the lower lane first):
// row i's result in element i.
template <typename Reduce>
void ReduceFourRows(const __m512 (&rows)[kBlockRows], Reduce reduce, float (&out)[kBlockRows]) {
  // [row 2k's lanes 0..7 | row 2k + 1's] against their lanes 8..15.
  const __m512 ab = reduce(_mm512_shuffle_f32x4(rows[0], rows[1], _MM_SHUFFLE(1, 0, 1, 0)),
                           _mm512_shuffle_f32x4(rows[0], rows[1], _MM_SHUFFLE(3, 2, 3, 2)));
  const __m512 cd = reduce(_mm512_shuffle_f32x4(rows[2], rows[3], _MM_SHUFFLE(1, 0, 1, 0)),
                           _mm512_shuffle_f32x4(rows[2], rows[3], _MM_SHUFFLE(3, 2, 3, 2)));
  // 128-bit lane i: row i's 4 values l against l + 4, then l against l + 2, then 0 against 1.
  __m512 quads = reduce(_mm512_shuffle_f32x4(ab, cd, _MM_SHUFFLE(2, 0, 2, 0)),
                        _mm512_shuffle_f32x4(ab, cd, _MM_SHUFFLE(3, 1, 3, 1)));
  quads = reduce(quads, _mm512_shuffle_ps(quads, quads, _MM_SHUFFLE(3, 2, 3, 2)));
  quads = reduce(quads, _mm512_shuffle_ps(quads, quads, _MM_SHUFFLE(1, 1, 1, 1)));
  alignas(64) float lanes[kLanes];
  _mm512_store_ps(lanes, quads);
  for (int i = 0; i < kBlockRows; ++i) out[i] = lanes[4 * i];
}

// SoftmaxStep for rows [r, r + kBlockRows) (IsRowBlock), their reductions side by side; each
// row's arithmetic is SoftmaxStep's.
void BlockSoftmax(const AttentionTile& tile, const AttentionState& state, int64_t r,
                  float (&s)[kBlockRows][kLanes], float (&p)[kBlockRows][kLanes],
                  float (&rescale)[kBlockRows]) {
  if (tile.logit_softcap > 0.0f) {
    for (int i = 0; i < kBlockRows; ++i) rescale[i] = SoftmaxStep(tile, state, r + i, s[i], p[i]);
    return;
  }
  const int first = tile.first_key[r];
  const int last = tile.last_key[r];
  const auto seen = static_cast<__mmask16>(((2u << last) - 1) & ~((1u << first) - 1));
  __m512 masked[kBlockRows];
  for (int i = 0; i < kBlockRows; ++i) {
    const __m512 scaled = _mm512_mul_ps(_mm512_loadu_ps(s[i]), _mm512_set1_ps(tile.scale));
    _mm512_storeu_ps(s[i], scaled);
    masked[i] = _mm512_mask_blend_ps(seen, _mm512_set1_ps(-__builtin_inff()), scaled);
  }
  float tile_max[kBlockRows];
  ReduceFourRows(
      masked, [](__m512 a, __m512 b) { return _mm512_max_ps(a, b); }, tile_max);
  float old_max[kBlockRows];
  float new_max[kBlockRows];
  for (int i = 0; i < kBlockRows; ++i) {
    old_max[i] = state.row_max[r + i];
    new_max[i] = old_max[i] > tile_max[i] ? old_max[i] : tile_max[i];
  }
  for (int i = 0; i < kBlockRows; ++i) {
    for (int j = 0; j < kLanes; ++j) {
      const float e = ExpNonPositive(s[i][j] - new_max[i]);
      p[i][j] = j >= first && j <= last ? e : 0.0f;
    }
  }
  __m512 weights[kBlockRows];
  for (int i = 0; i < kBlockRows; ++i) weights[i] = _mm512_loadu_ps(p[i]);
  float tile_sum[kBlockRows];
  ReduceFourRows(
      weights, [](__m512 a, __m512 b) { return _mm512_add_ps(a, b); }, tile_sum);
  for (int i = 0; i < kBlockRows; ++i) {
    rescale[i] = old_max[i] == new_max[i] ? 1.0f : __builtin_expf(old_max[i] - new_max[i]);
    state.row_max[r + i] = new_max[i];
    state.row_sum[r + i] = state.row_sum[r + i] * rescale[i] + tile_sum[i];
  }
}

// Rows [r, r + kBlockRows) (IsRowBlock) against kt and v.
void AttendRowBlock(const AttentionTile& tile, const AttentionState& state, int64_t r,
                    const float* kt, const float* v) {
  const int64_t head_dim = tile.head_dim;  // = acc_stride: whole slices
  float s[kBlockRows][kLanes];
  BlockLogits(tile.q + r * head_dim, head_dim, kt, s);
  float p[kBlockRows][kLanes];
  float rescale[kBlockRows];
  BlockSoftmax(tile, state, r, s, p, rescale);
  const int first = tile.first_key[r];
  const int last = tile.last_key[r];
  float* acc = state.acc + r * head_dim;
  int64_t d = 0;
  for (; d + 4 * kLanes <= head_dim; d += 4 * kLanes) {
    BlockAccumulate<4>(p, first, last, v + d, head_dim, rescale, acc + d);
  }
  for (; d < head_dim; d += kLanes) {
    BlockAccumulate<1>(p, first, last, v + d, head_dim, rescale, acc + d);
  }
}

}  // namespace

void AttendTileAvx512(const AttentionTile& tile, const AttentionState& state, float* scratch) {
  AttendTileImpl(tile, state, scratch, LoadKeysTransposed, LoadValuesBySlice,
                 [&](int64_t r, const float* kt, const float* v) {
                   if (!IsRowBlock(tile, r)) {
                     AttendRow(tile, state, r, kt, v);
                     return r + 1;
                   }
                   AttendRowBlock(tile, state, r, kt, v);
                   return r + kBlockRows;
                 });
}

}  // namespace vllm::kernels
