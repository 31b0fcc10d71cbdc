// Internal to the AVX-512 translation units, included inside their anonymous namespaces (as
// attention_tile_impl.h is): a 16 x 16 transpose of 32-bit elements in registers.
#pragma once

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
