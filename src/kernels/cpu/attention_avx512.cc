// AttendTile, the AVX-512 build of cpu/attention_tile_impl.h, with the tile's keys transposed
// 16 × 16 at a time in registers and its values converted 16 at a time when they are bf16 or f32
// and head_dim is a multiple of 16.
#include <immintrin.h>

#include <cstdint>

#include "kernels/attention_internal.h"

namespace vllm::kernels {
namespace {
#include "kernels/cpu/attention_tile_impl.h"

// rows[i] = row i of a 16 × 16 block; on return rows[i] = column i.
void Transpose16x16(__m512 (&rows)[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {  // per 128-bit lane: (r_i, r_i+1) elements 0,1 / 2,3 paired
    t[i] = _mm512_unpacklo_ps(rows[i], rows[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(rows[i], rows[i + 1]);
  }
  // r[4q + c]: in lane k, column 4k + c of rows 4q .. 4q + 3.
  __m512 r[16];
  for (int q = 0; q < 4; ++q) {
    const __m512d lo0 = _mm512_castps_pd(t[4 * q]), hi0 = _mm512_castps_pd(t[4 * q + 1]);
    const __m512d lo1 = _mm512_castps_pd(t[4 * q + 2]), hi1 = _mm512_castps_pd(t[4 * q + 3]);
    r[4 * q] = _mm512_castpd_ps(_mm512_unpacklo_pd(lo0, lo1));
    r[4 * q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(lo0, lo1));
    r[4 * q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(hi0, hi1));
    r[4 * q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(hi0, hi1));
  }
  // u[2c] (u[2c + 1]): columns c, c + 8 (c + 4, c + 12) of rows 0..7; u[8 + ...] of rows 8..15.
  __m512 u[16];
  for (int c = 0; c < 4; ++c) {
    u[2 * c] = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x88);
    u[2 * c + 1] = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xdd);
    u[8 + 2 * c] = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x88);
    u[8 + 2 * c + 1] = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xdd);
  }
  for (int c = 0; c < 4; ++c) {
    rows[c] = _mm512_shuffle_f32x4(u[2 * c], u[8 + 2 * c], 0x88);
    rows[c + 8] = _mm512_shuffle_f32x4(u[2 * c], u[8 + 2 * c], 0xdd);
    rows[c + 4] = _mm512_shuffle_f32x4(u[2 * c + 1], u[8 + 2 * c + 1], 0x88);
    rows[c + 12] = _mm512_shuffle_f32x4(u[2 * c + 1], u[8 + 2 * c + 1], 0xdd);
  }
}

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

}  // namespace

void AttendTileAvx512(const AttentionTile& tile, const AttentionState& state, float* scratch) {
  AttendTileImpl(tile, state, scratch, LoadKeysTransposed, LoadValuesBySlice);
}

}  // namespace vllm::kernels
