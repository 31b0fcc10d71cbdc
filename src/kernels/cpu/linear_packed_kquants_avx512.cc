// The AVX-512 VNNI kernels for packed Q4_K / Q5_K / Q6_K weights (packed_nibble_layout.h). A tile
// is G groups of 16 W rows (one per lane) × R x rows. Per 32-column chunk, 8 vpdpbusd per x row
// multiply the unsigned codes q of the 16 rows (4 per lane) by 4 broadcast x quants each; then,
// with the chunk's per-row scale lanes computed once for all R x rows, three f32 operations per x
// row:
//   Q4_K, Q5_K:  acc += d_x · ((d·sc) · Σ q·x_q − (dmin·mn) · Σ x_q)
//   Q6_K:        acc += d_x · ((d·sc_0) · Σ_0 (q − 32)·x_q + (d·sc_1) · Σ_1 (q − 32)·x_q)
// (Σ_0 / Σ_1: over the chunk's first / last 16 values; the −32 enters each integer dot as its
// start, −32 times the x half sum).
#include <immintrin.h>

#include <type_traits>

#include "kernels/cpu/packed_nibbles_avx512.h"

namespace vllm::kernels {
namespace {

constexpr int32_t kQ6_KBias = 32;  // Q6_K's codes q are its values plus 32

// The tiles: one group of 16 W rows × 8 x rows. (Two groups side by side would share each x
// broadcast, but fit only 4 x rows in the registers, which doubles the code unpacking per dot.)
constexpr int kScaleMinTileGroups = 1;
constexpr int kScaleMinTileRows = 8;
constexpr int kQ6_KTileGroups = 1;
constexpr int kQ6_KTileRows = 8;

// Q4_K / Q5_K: a chunk's d_x and Σ x_q.
struct ScaleMinTerms {
  float x_scale;
  float x_sum;
  static ScaleMinTerms Of(const PreparedActivations& x, int64_t block) {
    return {x.q8_scales[block], static_cast<float>(x.q8_sums[block])};
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
    for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
      const int64_t xb = b * kChunksPerSuperBlock + chunk;
      const ScaleMinTerms* terms = x.terms + xb * x.stride;
      const Chunk* codes[G];
      const uint8_t* nibbles[G];
      __m512 scales[G];
      __m512 mins[G];
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) {
        const Record& record = records[g][b];
        PrefetchAhead(reinterpret_cast<const uint8_t*>(&record) + chunk * kChunkRecordBytes,
                      kChunkRecordBytes);
        scales[g] = ScaledLanes(HalfLanes(record.d), record.scales[chunk]);
        mins[g] = ScaledLanes(HalfLanes(record.dmin), record.mins[chunk]);
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
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m512 x_sum = _mm512_set1_ps(terms[r].x_sum);
        const __m512 x_scale = _mm512_set1_ps(terms[r].x_scale);
#pragma GCC unroll 2
        for (int g = 0; g < G; ++g) {
          __m512 chunk_sum = _mm512_mul_ps(dots[g].Lanes(r), scales[g]);
          chunk_sum = _mm512_fnmadd_ps(mins[g], x_sum, chunk_sum);
          acc[g][r] = _mm512_fmadd_ps(chunk_sum, x_scale, acc[g][r]);
        }
      }
    }
  }
  StoreTile(acc, w.rows, group, first_x_row, y);
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
    for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
      const int64_t xb = b * kChunksPerSuperBlock + chunk;
      const Q6_KTerms* terms = x.terms + xb * x.stride;
      const PackedQ6_KChunk* codes[G];
      const uint8_t* nibbles[G];
      __m512 first_scales[G];
      __m512 last_scales[G];
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) {
        const PackedQ6_KRecord& record = records[g][b];
        PrefetchAhead(reinterpret_cast<const uint8_t*>(&record) + chunk * kChunkRecordBytes,
                      kChunkRecordBytes);
        const __m512 d = HalfLanes(record.d);
        first_scales[g] = ScaledLanes(d, record.scales[2 * chunk]);
        last_scales[g] = ScaledLanes(d, record.scales[2 * chunk + 1]);
        codes[g] = &record.chunks[chunk];
        nibbles[g] = codes[g]->nibbles;
      }
      // Weight vectors 0..3 hold the first 16 values, 4..7 the last 16.
      ChunkDots<R, G> first_dots[G];
      ChunkDots<R, G> last_dots[G];
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) {
        first_dots[g] = ChunkDots<R, G>([&](int r) { return terms[r].starts[0]; });
        last_dots[g] = ChunkDots<R, G>([&](int r) { return terms[r].starts[1]; });
      }
      ForEachNibbleVector<G>(nibbles, [&]<int K>(const __m512i(&low)[G]) {
        __m512i q[G];
#pragma GCC unroll 2
        for (int g = 0; g < G; ++g) {
          const __m512i crumbs = _mm512_loadu_si512(codes[g]->high_crumbs[K / 4]);
          const __m512i high =
              _mm512_and_si512(MoveBits<2 * (K % 4), 4>(crumbs), _mm512_set1_epi8(0x30));
          q[g] = _mm512_or_si512(low[g], high);
        }
        if constexpr (K < 4) {
          AddTileDots<K>(x, xb, q, first_dots);
        } else {
          AddTileDots<K>(x, xb, q, last_dots);
        }
      });
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m512 x_scale = _mm512_set1_ps(terms[r].x_scale);
#pragma GCC unroll 2
        for (int g = 0; g < G; ++g) {
          __m512 chunk_sum = _mm512_mul_ps(first_dots[g].Lanes(r), first_scales[g]);
          chunk_sum = _mm512_fmadd_ps(last_dots[g].Lanes(r), last_scales[g], chunk_sum);
          acc[g][r] = _mm512_fmadd_ps(chunk_sum, x_scale, acc[g][r]);
        }
      }
    }
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
