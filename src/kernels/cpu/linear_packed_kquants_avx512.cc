// The AVX-512 VNNI kernels for packed Q4_K / Q5_K / Q6_K weights (packed_nibble_layout.h), with x
// quantized with one scale d_x per super-block of 256 columns (ActivationFormat::kQ8K). A tile is
// G groups of 16 W rows (one per lane) × R x rows. Per 32-column chunk, 8 vpdpbusd per x row
// multiply the unsigned codes q of the 16 rows (4 per lane) by 4 broadcast x quants each; with the
// chunk's per-row scale lanes computed once for all R x rows, one f32 operation per x row (two for
// Q6_K) adds the chunk to the super-block's sum, and one per super-block scales that by d_x:
//   Q4_K, Q5_K:  sum = −dmin · Σ_c mn_c · Σ_c x_q  +  Σ_c (d·sc_c) · Σ_c q·x_q
//   Q6_K:        sum = Σ_c ((d·sc_c0) · Σ_c0 (q − 32)·x_q + (d·sc_c1) · Σ_c1 (q − 32)·x_q)
//   acc += d_x · sum
// (Σ_c: over chunk c; Σ_c0 / Σ_c1: over its first / last 16 values; the mins term is one integer
// dot per super-block, 4 vpdpwssd over pairs of mins and x sums; Q6_K's −32 enters each integer
// dot as its start, −32 times the x half sum).
#include <immintrin.h>

#include <type_traits>

#include "kernels/cpu/packed_nibbles_avx512.h"

namespace vllm::kernels {
namespace {

constexpr int32_t kQ6_KBias = 32;  // Q6_K's codes q are its values plus 32
constexpr int kMinPairs = kChunksPerSuperBlock / 2;

// The tiles: one group of 16 W rows × 8 x rows (8 accumulators, 8 super-block sums, 8 integer
// dots). (Two groups side by side would share each x broadcast, but fit only 4 x rows in the
// registers, which doubles the code unpacking per dot.)
constexpr int kScaleMinTileGroups = 1;
constexpr int kScaleMinTileRows = 8;
constexpr int kQ6_KTileGroups = 1;
constexpr int kQ6_KTileRows = 8;

// Q4_K / Q5_K: a super-block's d_x and its chunks' Σ x_q in pairs as 16-bit words (|Σ x_q| <=
// 32 · 128), chunk 2j in the low word of sum_pairs[j], chunk 2j + 1 in the high one.
struct ScaleMinTerms {
  static constexpr int64_t kChunks = kChunksPerSuperBlock;
  float x_scale;
  int32_t sum_pairs[kMinPairs];
  static ScaleMinTerms Of(const PreparedActivations& x, int64_t first_block) {
    ScaleMinTerms terms{x.q8_scales[first_block], {}};
    for (int j = 0; j < kMinPairs; ++j) {
      const auto low = static_cast<uint16_t>(x.q8_sums[first_block + 2 * j]);
      const auto high = static_cast<uint16_t>(x.q8_sums[first_block + 2 * j + 1]);
      terms.sum_pairs[j] = static_cast<int32_t>(low | static_cast<uint32_t>(high) << 16);
    }
    return terms;
  }
};

// Q6_K: a chunk's d_x and the starts of its two integer dots, −32 times the x half sums.
struct Q6_KTerms {
  float x_scale;
  int32_t starts[2];
  static Q6_KTerms Of(const PreparedActivations& x, int64_t block) {
    return {x.q8_scales[block],
            {-kQ6_KBias * x.q8_half_sums[2 * block], -kQ6_KBias * x.q8_half_sums[2 * block + 1]}};
  }
};

// Q4_K / Q5_K: the start of a super-block's sums, −dmin · Σ_c mn_c · Σ_c x_q (exact integer dot:
// |Σ| <= 8 · 63 · 4096 < 2^24), for the R x rows of a tile.
template <typename Record, int R>
inline void StartScaleMinSums(const Record& record, const ScaleMinTerms* terms, __m512 (&sums)[R]) {
  __m512i min_pairs[kMinPairs];
  for (int j = 0; j < kMinPairs; ++j) {
    min_pairs[j] = _mm512_cvtepu8_epi16(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(record.min_pairs[j])));
  }
  const __m512 negative_dmin = _mm512_sub_ps(_mm512_setzero_ps(), HalfLanes(record.dmin));
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    __m512i min_dot = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int j = 0; j < kMinPairs; ++j) {
      min_dot =
          _mm512_dpwssd_epi32(min_dot, min_pairs[j], _mm512_set1_epi32(terms[r].sum_pairs[j]));
    }
    sums[r] = _mm512_mul_ps(_mm512_cvtepi32_ps(min_dot), negative_dmin);
  }
}

// acc[g][r] += d_x of row r · sums[g][r], at the end of a super-block.
template <int R, int G, typename Terms>
inline void ScaleSuperBlockSums(const Terms* terms, const __m512 (&sums)[G][R],
                                __m512 (&acc)[G][R]) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const __m512 x_scale = _mm512_set1_ps(terms[r].x_scale);
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) acc[g][r] = _mm512_fmadd_ps(sums[g][r], x_scale, acc[g][r]);
  }
}

// sums[g][r] += dots[g] of row r · scales[g].
template <int R, int G>
inline void AddScaledDots(const ChunkDots<R, G> (&dots)[G], const __m512 (&scales)[G],
                          __m512 (&sums)[G][R]) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g)
      sums[g][r] = _mm512_fmadd_ps(dots[g].Lanes(r), scales[g], sums[g][r]);
  }
}

// Q4_K / Q5_K: tile of W groups [group, + G) × x rows [first_x_row, + R).
template <typename Chunk, int R, int G>
void ScaleMinTile(const PackedWeightView& w, int64_t group, int64_t first_x_row,
                  const XTile<ScaleMinTerms, R>& x, float* y) {
  using Record = PackedScaleMinRecord<Chunk>;
  constexpr int64_t kChunkRecordBytes = sizeof(Record) / kChunksPerSuperBlock;
  const int64_t num_records = w.cols / kSuperBlockSize;
  const Record* records[G];
  __m512 acc[G][R];
  StartTile(w, group, num_records, records, acc);
  for (int64_t b = 0; b < num_records; ++b) {
    const ScaleMinTerms* terms = x.terms + b * x.stride;
    __m512 sums[G][R];
    __m512 d[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      StartScaleMinSums(records[g][b], terms, sums[g]);
      d[g] = HalfLanes(records[g][b].d);
    }
    for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
      const int64_t xb = b * kChunksPerSuperBlock + chunk;
      const Chunk* codes[G];
      const uint8_t* nibbles[G];
      __m512 scales[G];
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) {
        const Record& record = records[g][b];
        PrefetchAhead(reinterpret_cast<const uint8_t*>(&record) + chunk * kChunkRecordBytes,
                      kChunkRecordBytes);
        scales[g] = ScaledLanes(d[g], record.scales[chunk]);
        codes[g] = &record.chunks[chunk];
        nibbles[g] = codes[g]->nibbles;
      }
      ChunkDots<R, G> dots[G];
      ForEachNibbleVector<G>(nibbles, [&]<int K>(const __m512i(&low)[G]) {
        __m512i q[G];
#pragma GCC unroll 2
        for (int g = 0; g < G; ++g) {
          q[g] = low[g];
          if constexpr (std::is_same_v<Chunk, PackedQ5_KChunk>) {
            const __m512i fifth_bits = _mm512_loadu_si512(codes[g]->fifth_bits);
            q[g] = _mm512_or_si512(
                q[g], _mm512_and_si512(MoveBits<K, 4>(fifth_bits), _mm512_set1_epi8(0x10)));
          }
        }
        AddTileDots<K>(x, xb, q, dots);
      });
      AddScaledDots(dots, scales, sums);
    }
    ScaleSuperBlockSums(terms, sums, acc);
  }
  StoreTile(acc, w.rows, group, first_x_row, y);
}

// Q6_K: adds one half of a chunk (kHigh: its last 16 values) to the super-block sums, for groups
// whose chunk codes are `codes` and whose half's scale lanes are `scales`.
template <bool kHigh, int R, int G>
inline void AddQ6_KHalf(const PackedQ6_KChunk* const (&codes)[G], const XTile<Q6_KTerms, R>& x,
                        int64_t xb, const Q6_KTerms* terms, const __m512 (&scales)[G],
                        __m512 (&sums)[G][R]) {
  const uint8_t* nibbles[G];
  __m512i crumbs[G];
#pragma GCC unroll 2
  for (int g = 0; g < G; ++g) {
    nibbles[g] = codes[g]->nibbles;
    crumbs[g] = _mm512_loadu_si512(codes[g]->high_crumbs[kHigh]);
  }
  ChunkDots<R, G> dots[G];
#pragma GCC unroll 2
  for (int g = 0; g < G; ++g) {
    dots[g] = ChunkDots<R, G>([&](int r) { return terms[r].starts[kHigh]; });
  }
  ForEachNibbleHalf<G, kHigh>(nibbles, [&]<int K>(const __m512i(&low)[G]) {
    __m512i q[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      const __m512i high =
          _mm512_and_si512(MoveBits<2 * (K % 4), 4>(crumbs[g]), _mm512_set1_epi8(0x30));
      q[g] = _mm512_or_si512(low[g], high);
    }
    AddTileDots<K>(x, xb, q, dots);
  });
  AddScaledDots(dots, scales, sums);
}

// Q6_K: tile of W groups [group, + G) × x rows [first_x_row, + R).
template <int R, int G>
void Q6_KTile(const PackedWeightView& w, int64_t group, int64_t first_x_row,
              const XTile<Q6_KTerms, R>& x, float* y) {
  constexpr int64_t kChunkRecordBytes = sizeof(PackedQ6_KRecord) / kChunksPerSuperBlock;
  const int64_t num_records = w.cols / kSuperBlockSize;
  const PackedQ6_KRecord* records[G];
  __m512 acc[G][R];
  StartTile(w, group, num_records, records, acc);
  for (int64_t b = 0; b < num_records; ++b) {
    __m512 sums[G][R];
    __m512 d[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      d[g] = HalfLanes(records[g][b].d);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) sums[g][r] = _mm512_setzero_ps();
    }
    for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
      const int64_t xb = b * kChunksPerSuperBlock + chunk;
      const Q6_KTerms* terms = x.terms + xb * x.stride;
      const PackedQ6_KChunk* codes[G];
      __m512 first_scales[G];
      __m512 last_scales[G];
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) {
        const PackedQ6_KRecord& record = records[g][b];
        PrefetchAhead(reinterpret_cast<const uint8_t*>(&record) + chunk * kChunkRecordBytes,
                      kChunkRecordBytes);
        first_scales[g] = ScaledLanes(d[g], record.scales[2 * chunk]);
        last_scales[g] = ScaledLanes(d[g], record.scales[2 * chunk + 1]);
        codes[g] = &record.chunks[chunk];
      }
      AddQ6_KHalf<false>(codes, x, xb, terms, first_scales, sums);
      AddQ6_KHalf<true>(codes, x, xb, terms, last_scales, sums);
    }
    // The super-block's chunks share one d_x (kQ8K): its first chunk's.
    ScaleSuperBlockSums(x.terms + b * kChunksPerSuperBlock * x.stride, sums, acc);
  }
  StoreTile(acc, w.rows, group, first_x_row, y);
}

template <typename Chunk>
void ScaleMinRows(const PackedWeightView& w, const PreparedActivations& x, int64_t row_begin,
                  int64_t row_end, float* y) {
  ForEachNibbleTile<ScaleMinTerms, kScaleMinTileGroups, kScaleMinTileRows>(
      x, row_begin, row_end,
      [&]<int R, int G>(int64_t group, int64_t first_x_row, const XTile<ScaleMinTerms, R>& xt) {
        ScaleMinTile<Chunk, R, G>(w, group, first_x_row, xt, y);
      });
}

}  // namespace

void PrepareScaleMinTermsAvx512(PreparedActivations& x) { PrepareNibbleTerms<ScaleMinTerms>(x); }

void PrepareQ6_KTermsAvx512(PreparedActivations& x) { PrepareNibbleTerms<Q6_KTerms>(x); }

void LinearRowsPackedQ4_KAvx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  ScaleMinRows<PackedQ4_KChunk>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedQ5_KAvx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  ScaleMinRows<PackedQ5_KChunk>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedQ6_KAvx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  ForEachNibbleTile<Q6_KTerms, kQ6_KTileGroups, kQ6_KTileRows>(
      x, row_begin, row_end,
      [&]<int R, int G>(int64_t group, int64_t first_x_row, const XTile<Q6_KTerms, R>& xt) {
        Q6_KTile<R, G>(w, group, first_x_row, xt, y);
      });
}

}  // namespace vllm::kernels
