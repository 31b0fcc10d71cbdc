// The AVX-512 VNNI kernels for packed Q4_K / Q5_K / Q6_K weights (packed_nibble_layout.h). A tile
// is 16 W rows (one per lane) × R x rows. Per 32-column chunk, 8 vpdpbusd per x row multiply the
// unsigned codes q of the 16 rows (4 per lane) by 4 broadcast x quants each; then, with the
// chunk's per-row scale lanes computed once for all R x rows, three f32 operations per x row:
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

// A bit field of `plane` moved from bit kFrom to bit kTo of every byte (the other bits: garbage).
// The shifts work on 16-bit words: shifting left by s fills bits [0, s) of a word's high byte from
// its low byte, shifting right by s bits [8 - s, 8) of the low byte from the high byte. The fields
// moved here (to bit 4, 1 or 2 bits wide, left by at most 4 or right by at most 3) stay clean.
template <int kFrom, int kTo>
inline __m512i MoveBits(__m512i plane) {
  if constexpr (kTo > kFrom) {
    return _mm512_slli_epi16(plane, kTo - kFrom);
  } else if constexpr (kTo < kFrom) {
    return _mm512_srli_epi16(plane, kFrom - kTo);
  } else {
    return plane;
  }
}

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

// Q4_K / Q5_K: tile of W group `group` × x rows [first_x_row, + R).
template <typename Chunk, int R>
void ScaleMinTile(const PackedWeightView& w, int64_t group, int64_t first_x_row,
                  const XTile<ScaleMinTerms, R>& x, float* y) {
  using Record = PackedScaleMinRecord<Chunk>;
  constexpr int64_t kChunkRecordBytes = sizeof(Record) / kChunksPerSuperBlock;
  const int64_t num_records = w.cols / kSuperBlockSize;
  const Record* records = reinterpret_cast<const Record*>(w.data) + group * num_records;
  __m512 acc[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t b = 0; b < num_records; ++b) {
    const Record& record = records[b];
    const __m512 d = HalfLanes(record.d);
    const __m512 dmin = HalfLanes(record.dmin);
    for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
      const int64_t xb = b * kChunksPerSuperBlock + chunk;
      const ScaleMinTerms* terms = x.terms + xb * x.stride;
      PrefetchAhead(reinterpret_cast<const uint8_t*>(&record) + chunk * kChunkRecordBytes,
                    kChunkRecordBytes);
      const __m512 scales = ScaledLanes(d, record.scales[chunk]);
      const __m512 mins = ScaledLanes(dmin, record.mins[chunk]);
      const Chunk& codes = record.chunks[chunk];
      ChunkDots<R> dots;
      ForEachNibbleVector(codes.nibbles, [&]<int K>(__m512i q) {
        if constexpr (std::is_same_v<Chunk, PackedQ5_KChunk>) {
          const __m512i fifth_bits = _mm512_loadu_si512(codes.fifth_bits);
          q = _mm512_or_si512(q,
                              _mm512_and_si512(MoveBits<K, 4>(fifth_bits), _mm512_set1_epi8(0x10)));
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) dots.template Add<K>(r, q, BroadcastFour<K>(x.blocks[r][xb]));
      });
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        __m512 chunk_sum = _mm512_mul_ps(dots.Lanes(r), scales);
        chunk_sum = _mm512_fnmadd_ps(mins, _mm512_set1_ps(terms[r].x_sum), chunk_sum);
        acc[r] = _mm512_fmadd_ps(chunk_sum, _mm512_set1_ps(terms[r].x_scale), acc[r]);
      }
    }
  }
  StoreTile(acc, w.rows, group, first_x_row, y);
}

// Q6_K: tile of W group `group` × x rows [first_x_row, + R).
template <int R>
void Q6_KTile(const PackedWeightView& w, int64_t group, int64_t first_x_row,
              const XTile<Q6_KTerms, R>& x, float* y) {
  constexpr int64_t kChunkRecordBytes = sizeof(PackedQ6_KRecord) / kChunksPerSuperBlock;
  const int64_t num_records = w.cols / kSuperBlockSize;
  const PackedQ6_KRecord* records =
      reinterpret_cast<const PackedQ6_KRecord*>(w.data) + group * num_records;
  __m512 acc[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t b = 0; b < num_records; ++b) {
    const PackedQ6_KRecord& record = records[b];
    const __m512 d = HalfLanes(record.d);
    for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
      const int64_t xb = b * kChunksPerSuperBlock + chunk;
      const Q6_KTerms* terms = x.terms + xb * x.stride;
      PrefetchAhead(reinterpret_cast<const uint8_t*>(&record) + chunk * kChunkRecordBytes,
                    kChunkRecordBytes);
      const __m512 first_scales = ScaledLanes(d, record.scales[2 * chunk]);
      const __m512 last_scales = ScaledLanes(d, record.scales[2 * chunk + 1]);
      // Weight vectors 0..3 hold the first 16 values, 4..7 the last 16.
      ChunkDots<R> first_dots([&](int r) { return terms[r].starts[0]; });
      ChunkDots<R> last_dots([&](int r) { return terms[r].starts[1]; });
      const PackedQ6_KChunk& codes = record.chunks[chunk];
      ForEachNibbleVector(codes.nibbles, [&]<int K>(__m512i low) {
        const __m512i crumbs = _mm512_loadu_si512(codes.high_crumbs[K / 4]);
        const __m512i high =
            _mm512_and_si512(MoveBits<2 * (K % 4), 4>(crumbs), _mm512_set1_epi8(0x30));
        const __m512i q = _mm512_or_si512(low, high);
        ChunkDots<R>& dots = K < 4 ? first_dots : last_dots;
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) dots.template Add<K>(r, q, BroadcastFour<K>(x.blocks[r][xb]));
      });
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        __m512 chunk_sum = _mm512_mul_ps(first_dots.Lanes(r), first_scales);
        chunk_sum = _mm512_fmadd_ps(last_dots.Lanes(r), last_scales, chunk_sum);
        acc[r] = _mm512_fmadd_ps(chunk_sum, _mm512_set1_ps(terms[r].x_scale), acc[r]);
      }
    }
  }
  StoreTile(acc, w.rows, group, first_x_row, y);
}

template <typename Chunk>
void ScaleMinRows(const PackedWeightView& w, const PreparedActivations& x, int64_t row_begin,
                  int64_t row_end, float* y) {
  ForEachNibbleTile<ScaleMinTerms>(
      x, row_begin, row_end,
      [&]<int R>(int64_t group, int64_t first_x_row, const XTile<ScaleMinTerms, R>& xt) {
        ScaleMinTile<Chunk, R>(w, group, first_x_row, xt, y);
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
  ForEachNibbleTile<Q6_KTerms>(
      x, row_begin, row_end,
      [&]<int R>(int64_t group, int64_t first_x_row, const XTile<Q6_KTerms, R>& xt) {
        Q6_KTile<R>(w, group, first_x_row, xt, y);
      });
}

}  // namespace vllm::kernels
