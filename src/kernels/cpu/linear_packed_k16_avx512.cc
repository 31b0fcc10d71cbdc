// The AVX-512 VNNI kernels for the packed K-quants whose sub-blocks are 16 values (Q2_K, Q3_K,
// Q6_K; packed_nibble_layout.h), with x quantized with one scale d_x per super-block of 256 columns
// (ActivationFormat::kQ8K). A tile is one group of 16 W rows (one per lane) × R x rows. A 32-column
// chunk is two halves of 16 with a scale each: per half, 4 vpdpbusd per x row multiply the unsigned
// codes q of the 16 rows (4 per lane) by 4 broadcast x quants each, and one FMA per x row adds
// that integer dot times the half's scale lanes (computed once for all R x rows) to the
// super-block's sums; one FMA per super-block scales those by d_x:
//   Q6_K, Q3_K:  sum = Σ_h (d·sc_h) · Σ_h (q − bias)·x_q       (bias 32 / 4)
//   Q2_K:        sum = −dmin · Σ_h mn_h · Σ_h x_q  +  Σ_h (d·sc_h) · Σ_h q·x_q
//   acc += d_x · sum
// (Σ_h: over half h; the bias enters each integer dot as its start, −bias times the x half sum;
// Q2_K's mins term is one integer dot per super-block, 8 vpdpwssd over pairs of mins and x half
// sums.)
#include <immintrin.h>

#include "kernels/cpu/packed_nibbles_avx512.h"

namespace vllm::kernels {
namespace {

// One group of 16 W rows × 8 x rows (8 accumulators, 8 super-block sums, 8 integer dots).
constexpr int kTileGroups = 1;
constexpr int kTileRows = 8;

// Q6_K / Q3_K: a chunk's d_x and the starts of its two integer dots, −kBias times the x half sums.
template <int32_t kBias>
struct BiasedHalfTerms {
  float x_scale;
  int32_t starts[2];
  static BiasedHalfTerms Of(const PreparedActivations& x, int64_t block) {
    return {x.q8_scales[block],
            {-kBias * x.q8_half_sums[2 * block], -kBias * x.q8_half_sums[2 * block + 1]}};
  }
};

// What a type contributes to the tile: its record, x terms, the start of a super-block's sums and
// of a half's integer dots, a half's scale lanes, and its codes: ForEachHalfVector<G, kHigh>(
// chunks, step) calls step.template operator()<K>(q) for the 4 weight vectors K of half kHigh
// (q[g]: group g's unsigned codes, values [4K, 4K + 4) of each row).

// Q6_K and Q3_K: no mins; the codes carry kBias; an int8 scale per half chunk.
template <typename RecordType, int32_t kBias>
struct BiasedHalves {
  using Record = RecordType;
  using Terms = BiasedHalfTerms<kBias>;
  template <int R>
  static void StartSums(const Record&, const Terms*, __m512 (&sums)[R]) {
    for (int r = 0; r < R; ++r) sums[r] = _mm512_setzero_ps();
  }
  template <bool kHigh>
  static int32_t DotStart(const Terms& terms) {
    return terms.starts[kHigh];
  }
  static __m512 HalfScales(const Record& record, __m512 d, int chunk, int half) {
    return ScaledLanes(d, record.scales[2 * chunk + half]);
  }
};

// Q6_K: q = low nibble + 16 · high crumb, value q − 32, sc int8.
struct Q6_KCodes : BiasedHalves<PackedQ6_KRecord, 32> {
  using Chunk = PackedQ6_KChunk;
  template <int G, bool kHigh, typename Step>
  static void ForEachHalfVector(const Chunk* const (&chunks)[G], const Step& step) {
    const uint8_t* nibbles[G];
    __m512i crumbs[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      nibbles[g] = chunks[g]->nibbles;
      crumbs[g] = _mm512_loadu_si512(chunks[g]->high_crumbs[kHigh]);
    }
    ForEachNibbleHalf<G, kHigh>(nibbles, [&]<int K>(const __m512i(&low)[G]) {
      __m512i q[G];
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) {
        const __m512i high =
            _mm512_and_si512(MoveBits<2 * (K % 4), 4>(crumbs[g]), _mm512_set1_epi8(0x30));
        q[g] = _mm512_or_si512(low[g], high);
      }
      step.template operator()<K>(q);
    });
  }
};

// Q3_K and Q2_K's codes of one half: weight vectors K = 4 kHigh + j, j = kStep ... 3, from the
// half's crumb plane (bits [2j, 2j + 2)) and, with kThirdBits, the third-bit plane (bit K, as 4).
template <int G, bool kHigh, bool kThirdBits, int kStep = 0, typename Step>
inline void ForEachCrumbVector(const __m512i (&crumbs)[G], const __m512i (&third_bits)[G],
                               const Step& step) {
  constexpr int K = 4 * kHigh + kStep;
  __m512i q[G];
#pragma GCC unroll 2
  for (int g = 0; g < G; ++g) {
    q[g] = _mm512_and_si512(MoveBits<2 * kStep, 0>(crumbs[g]), _mm512_set1_epi8(0x03));
    if constexpr (kThirdBits) {
      q[g] = _mm512_or_si512(
          q[g], _mm512_and_si512(MoveBits<K, 2>(third_bits[g]), _mm512_set1_epi8(0x04)));
    }
  }
  step.template operator()<K>(q);
  if constexpr (kStep < 3) {
    ForEachCrumbVector<G, kHigh, kThirdBits, kStep + 1>(crumbs, third_bits, step);
  }
}

// Q3_K: q = low crumb + 4 · third bit, value q − 4, sc − 32 int8.
struct Q3_KCodes : BiasedHalves<PackedQ3_KRecord, 4> {
  using Chunk = PackedQ3_KChunk;
  template <int G, bool kHigh, typename Step>
  static void ForEachHalfVector(const Chunk* const (&chunks)[G], const Step& step) {
    __m512i crumbs[G];
    __m512i third_bits[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      crumbs[g] = _mm512_loadu_si512(chunks[g]->low_crumbs[kHigh]);
      third_bits[g] = _mm512_loadu_si512(chunks[g]->third_bits);
    }
    ForEachCrumbVector<G, kHigh, /*kThirdBits=*/true>(crumbs, third_bits, step);
  }
};

// Q2_K: q = crumb, value d · sc · q − dmin · mn, sc and mn 4-bit (in one byte per half).
struct Q2_KCodes {
  using Record = PackedQ2_KRecord;
  using Chunk = PackedQ2_KChunk;
  using Terms = MinPairTerms<kChunksPerSuperBlock>;
  template <int R>
  static void StartSums(const Record& record, const Terms* terms, __m512 (&sums)[R]) {
    StartMinSums</*kMinShift=*/4>(record.scale_min_pairs, record.dmin, terms, sums);
  }
  template <bool kHigh>
  static int32_t DotStart(const Terms&) {
    return 0;
  }
  // The chunk's pair widened: 32-bit lane l holds row l's byte of half 0 in bits [0, 8) and of
  // half 1 in bits [16, 24); sc is the low nibble of each.
  static __m512 HalfScales(const Record& record, __m512 d, int chunk, int half) {
    const __m512i pair = _mm512_cvtepu8_epi16(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(record.scale_min_pairs[chunk])));
    const __m512i scales =
        _mm512_and_si512(_mm512_srli_epi32(pair, 16 * half), _mm512_set1_epi32(0x0f));
    return _mm512_mul_ps(d, _mm512_cvtepi32_ps(scales));
  }
  template <int G, bool kHigh, typename Step>
  static void ForEachHalfVector(const Chunk* const (&chunks)[G], const Step& step) {
    __m512i crumbs[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) crumbs[g] = _mm512_loadu_si512(chunks[g]->low_crumbs[kHigh]);
    ForEachCrumbVector<G, kHigh, /*kThirdBits=*/false>(crumbs, crumbs, step);
  }
};

// Adds half kHigh of a chunk (groups' codes `chunks`, scale lanes `scales`) to the super-block's
// sums.
template <typename Codes, bool kHigh, int R, int G>
inline void AddHalf(const typename Codes::Chunk* const (&chunks)[G],
                    const XTile<typename Codes::Terms, R>& x, int64_t xb,
                    const typename Codes::Terms* terms, const __m512 (&scales)[G],
                    __m512 (&sums)[G][R]) {
  ChunkDots<R, G> dots[G];
#pragma GCC unroll 2
  for (int g = 0; g < G; ++g) {
    dots[g] = ChunkDots<R, G>([&](int r) { return Codes::template DotStart<kHigh>(terms[r]); });
  }
  Codes::template ForEachHalfVector<G, kHigh>(
      chunks, [&]<int K>(const __m512i(&q)[G]) { AddTileDots<K>(x, xb, q, dots); });
  AddScaledDots(dots, scales, sums);
}

// Tile of W groups [group, + G) × x rows [first_x_row, + R).
template <typename Codes, int R, int G>
void HalvesTile(const PackedWeightView& w, int64_t group, int64_t first_x_row,
                const XTile<typename Codes::Terms, R>& x, float* y) {
  using Record = typename Codes::Record;
  using Terms = typename Codes::Terms;
  constexpr int64_t kChunkRecordBytes = sizeof(Record) / kChunksPerSuperBlock;
  constexpr int64_t kTermsPerSuperBlock = kChunksPerSuperBlock / ChunksPerTerms<Terms>();
  const int64_t num_records = w.cols / kSuperBlockSize;
  const Record* records[G];
  __m512 acc[G][R];
  StartTile(w, group, num_records, records, acc);
  for (int64_t b = 0; b < num_records; ++b) {
    const Terms* super_block_terms = x.terms + b * kTermsPerSuperBlock * x.stride;
    __m512 sums[G][R];
    __m512 d[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      d[g] = HalfLanes(records[g][b].d);
      Codes::StartSums(records[g][b], super_block_terms, sums[g]);
    }
    for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
      const int64_t xb = b * kChunksPerSuperBlock + chunk;
      const Terms* terms = x.terms + xb / ChunksPerTerms<Terms>() * x.stride;
      const typename Codes::Chunk* chunks[G];
      __m512 first_scales[G];
      __m512 last_scales[G];
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) {
        const Record& record = records[g][b];
        PrefetchAhead(reinterpret_cast<const uint8_t*>(&record) + chunk * kChunkRecordBytes,
                      kChunkRecordBytes);
        first_scales[g] = Codes::HalfScales(record, d[g], chunk, 0);
        last_scales[g] = Codes::HalfScales(record, d[g], chunk, 1);
        chunks[g] = &record.chunks[chunk];
      }
      AddHalf<Codes, false>(chunks, x, xb, terms, first_scales, sums);
      AddHalf<Codes, true>(chunks, x, xb, terms, last_scales, sums);
    }
    // The super-block's chunks share one d_x (kQ8K): its first chunk's.
    ScaleSuperBlockSums(super_block_terms, sums, acc);
  }
  StoreTile(acc, w.rows, group, first_x_row, y);
}

template <typename Codes>
void HalvesRows(const PackedWeightView& w, const PreparedActivations& x, int64_t row_begin,
                int64_t row_end, float* y) {
  using Terms = typename Codes::Terms;
  ForEachNibbleTile<Terms, kTileGroups, kTileRows>(
      x, row_begin, row_end,
      [&]<int R, int G>(int64_t group, int64_t first_x_row, const XTile<Terms, R>& xt) {
        HalvesTile<Codes, R, G>(w, group, first_x_row, xt, y);
      });
}

}  // namespace

void PrepareQ2_KTermsAvx512(PreparedActivations& x) { PrepareNibbleTerms<Q2_KCodes::Terms>(x); }
void PrepareQ3_KTermsAvx512(PreparedActivations& x) { PrepareNibbleTerms<Q3_KCodes::Terms>(x); }
void PrepareQ6_KTermsAvx512(PreparedActivations& x) { PrepareNibbleTerms<Q6_KCodes::Terms>(x); }

void LinearRowsPackedQ2_KAvx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  HalvesRows<Q2_KCodes>(w, x, row_begin, row_end, y);
}
void LinearRowsPackedQ3_KAvx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  HalvesRows<Q3_KCodes>(w, x, row_begin, row_end, y);
}
void LinearRowsPackedQ6_KAvx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  HalvesRows<Q6_KCodes>(w, x, row_begin, row_end, y);
}

}  // namespace vllm::kernels
