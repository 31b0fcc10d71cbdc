// The AVX-512 VNNI kernels for the packed K-quants (Q2_K ... Q6_K; packed_nibble_layout.h), with x
// quantized with one scale d_x per super-block of 256 columns (ActivationFormat::kQ8K). A tile is
// G groups of 16 W rows (one per lane) × R x rows. A 32-column chunk is one part (Q4_K, Q5_K: one
// scale per 32 values) or two halves of 16 (Q2_K, Q3_K, Q6_K: a scale each): per part, vpdpbusd
// per x row multiply the unsigned codes q of the 16 rows (4 per lane) by 4 broadcast x quants each,
// and one FMA per x row adds that integer dot times the part's scale lanes (computed once for all
// R x rows) to the super-block's sums; one FMA per super-block scales those by d_x:
//   Q4_K, Q5_K:  sum = −dmin · Σ_c mn_c · Σ_c x_q  +  Σ_c (d·sc_c) · Σ_c q·x_q
//   Q6_K, Q3_K:  sum = Σ_h (d·sc_h) · Σ_h (q − bias)·x_q       (bias 32 / 4)
//   Q2_K:        sum = −dmin · Σ_h mn_h · Σ_h x_q  +  Σ_h (d·sc_h) · Σ_h q·x_q
//   acc += d_x · sum
// (Σ_c: over chunk c, Σ_h: over half h; the bias enters each integer dot as its start, −bias times
// the x half sum; the mins term is one integer dot per super-block, 4 or 8 vpdpwssd over pairs of
// mins and x sums.) With many x rows, the types whose codes take the most unpacking unpack each
// super-block's codes once for a block of x rows and run tiles of two groups × 6 x rows over them
// (UnpackedRows), in the same order of arithmetic.
#include <immintrin.h>

#include <type_traits>

#include "kernels/cpu/packed_nibbles_avx512.h"

namespace vllm::kernels {
namespace {

// The streaming tiles: one group of 16 W rows × 8 x rows (8 accumulators, 8 super-block sums, 8
// integer dots). (Two groups side by side would share each x broadcast, but fit only 4 x rows in
// the registers, which doubles the code unpacking per dot.)
constexpr int kTileGroups = 1;
constexpr int kTileRows = 8;

// What a type contributes to the tiles: its record, x terms, its parts per chunk (kParts: 1 or 2,
// of 8 / kParts weight vectors and one scale each), the start of a super-block's sums and of a
// part's integer dots, a part's scale lanes, and its codes: ForEachPartVector<G, kPart>(chunks,
// step) calls step.template operator()<K>(q) for the weight vectors K of part kPart (q[g]: group
// g's unsigned codes, values [4K, 4K + 4) of each row); kUnpackOnce: whether many x rows take the
// unpacked path (kMinUnpackedRows).

// Q4_K and Q5_K: one part per chunk with a 6-bit scale, 6-bit mins.
template <typename ChunkType>
struct ScaleMinCodes {
  using Record = PackedScaleMinRecord<ChunkType>;
  using Chunk = ChunkType;
  using Terms = MinPairTerms<kChunksPerSuperBlock / 2>;
  static constexpr int kParts = 1;
  static constexpr bool kUnpackOnce = std::is_same_v<ChunkType, PackedQ5_KChunk>;
  template <int R>
  static void StartSums(const Record& record, const Terms* terms, __m512 (&sums)[R]) {
    StartMinSums</*kMinShift=*/0>(record.min_pairs, record.dmin, terms, sums);
  }
  template <int kPart>
  static int32_t DotStart(const Terms&) {
    return 0;
  }
  static __m512 PartScales(const Record& record, __m512 d, int chunk, int) {
    return ScaledLanes(d, record.scales[chunk]);
  }
  template <int G, int kPart, typename Step>
  static void ForEachPartVector(const Chunk* const (&chunks)[G], const Step& step) {
    const uint8_t* nibbles[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) nibbles[g] = chunks[g]->nibbles;
    ForEachNibbleVector<G>(nibbles, [&]<int K>(const __m512i(&low)[G]) {
      __m512i q[G];
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) {
        q[g] = low[g];
        if constexpr (std::is_same_v<Chunk, PackedQ5_KChunk>) {
          const __m512i fifth_bits = _mm512_loadu_si512(chunks[g]->fifth_bits);
          q[g] = _mm512_or_si512(
              q[g], _mm512_and_si512(MoveBits<K, 4>(fifth_bits), _mm512_set1_epi8(0x10)));
        }
      }
      step.template operator()<K>(q);
    });
  }
};

// Q6_K and Q3_K: no mins; the codes carry kBias; an int8 scale per half chunk.
template <typename RecordType, int32_t kBias>
struct BiasedHalves {
  using Record = RecordType;
  using Terms = BiasedHalfTerms<kBias>;
  static constexpr int kParts = 2;
  static constexpr bool kUnpackOnce = true;
  template <int R>
  static void StartSums(const Record&, const Terms*, __m512 (&sums)[R]) {
    for (int r = 0; r < R; ++r) sums[r] = _mm512_setzero_ps();
  }
  template <int kPart>
  static int32_t DotStart(const Terms& terms) {
    return terms.starts[kPart];
  }
  static __m512 PartScales(const Record& record, __m512 d, int chunk, int half) {
    return ScaledLanes(d, record.scales[2 * chunk + half]);
  }
};

// Q6_K: q = low nibble + 16 · high crumb, value q − 32, sc int8.
struct Q6_KCodes : BiasedHalves<PackedQ6_KRecord, 32> {
  using Chunk = PackedQ6_KChunk;
  template <int G, int kHigh, typename Step>
  static void ForEachPartVector(const Chunk* const (&chunks)[G], const Step& step) {
    const uint8_t* nibbles[G];
    __m512i crumbs[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      nibbles[g] = chunks[g]->nibbles;
      crumbs[g] = _mm512_loadu_si512(chunks[g]->high_crumbs[kHigh]);
    }
    ForEachNibbleHalf<G, kHigh == 1>(nibbles, [&]<int K>(const __m512i(&low)[G]) {
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
  template <int G, int kHigh, typename Step>
  static void ForEachPartVector(const Chunk* const (&chunks)[G], const Step& step) {
    __m512i crumbs[G];
    __m512i third_bits[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      crumbs[g] = _mm512_loadu_si512(chunks[g]->low_crumbs[kHigh]);
      third_bits[g] = _mm512_loadu_si512(chunks[g]->third_bits);
    }
    ForEachCrumbVector<G, kHigh == 1, /*kThirdBits=*/true>(crumbs, third_bits, step);
  }
};

// Q2_K: q = crumb, value d · sc · q − dmin · mn, sc and mn 4-bit (in one byte per half).
struct Q2_KCodes {
  using Record = PackedQ2_KRecord;
  using Chunk = PackedQ2_KChunk;
  using Terms = MinPairTerms<kChunksPerSuperBlock>;
  static constexpr int kParts = 2;
  static constexpr bool kUnpackOnce = false;
  template <int R>
  static void StartSums(const Record& record, const Terms* terms, __m512 (&sums)[R]) {
    StartMinSums</*kMinShift=*/4>(record.scale_min_pairs, record.dmin, terms, sums);
  }
  template <int kPart>
  static int32_t DotStart(const Terms&) {
    return 0;
  }
  // The chunk's pair widened: 32-bit lane l holds row l's byte of half 0 in bits [0, 8) and of
  // half 1 in bits [16, 24); sc is the low nibble of each.
  static __m512 PartScales(const Record& record, __m512 d, int chunk, int half) {
    const __m512i pair = _mm512_cvtepu8_epi16(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(record.scale_min_pairs[chunk])));
    const __m512i scales =
        _mm512_and_si512(_mm512_srli_epi32(pair, 16 * half), _mm512_set1_epi32(0x0f));
    return _mm512_mul_ps(d, _mm512_cvtepi32_ps(scales));
  }
  template <int G, int kHigh, typename Step>
  static void ForEachPartVector(const Chunk* const (&chunks)[G], const Step& step) {
    __m512i crumbs[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) crumbs[g] = _mm512_loadu_si512(chunks[g]->low_crumbs[kHigh]);
    ForEachCrumbVector<G, kHigh == 1, /*kThirdBits=*/false>(crumbs, crumbs, step);
  }
};

// Adds part kPart of a chunk (scale lanes `scales`) to the super-block's sums;
// for_each_vector(step) calls step.template operator()<K>(q) for the part's weight vectors K (q[g]:
// group g's codes).
template <typename Codes, int kPart, int R, int G, typename ForEachVector>
inline void AddPart(const ForEachVector& for_each_vector, const XTile<typename Codes::Terms, R>& x,
                    int64_t xb, const typename Codes::Terms* terms, const __m512 (&scales)[G],
                    __m512 (&sums)[G][R]) {
  ChunkDots<R, G> dots[G];
#pragma GCC unroll 2
  for (int g = 0; g < G; ++g) {
    dots[g] = ChunkDots<R, G>([&](int r) { return Codes::template DotStart<kPart>(terms[r]); });
  }
  for_each_vector([&]<int K>(const __m512i(&q)[G]) { AddTileDots<K>(x, xb, q, dots); });
  AddScaledDots(dots, scales, sums);
}

// Calls part.template operator()<kPart>() for kPart = 0 ... kParts − 1.
template <int kParts, typename Part>
inline void ForEachPart(const Part& part) {
  part.template operator()<0>();
  if constexpr (kParts > 1) part.template operator()<1>();
}

// The streaming tile of W groups [group, + G) × x rows [first_x_row, + R).
template <typename Codes, int R, int G>
void StreamingTile(const PackedWeightView& w, int64_t group, int64_t first_x_row,
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
      __m512 scales[Codes::kParts][G];
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) {
        const Record& record = records[g][b];
        PrefetchAhead(reinterpret_cast<const uint8_t*>(&record) + chunk * kChunkRecordBytes,
                      kChunkRecordBytes);
        for (int part = 0; part < Codes::kParts; ++part) {
          scales[part][g] = Codes::PartScales(record, d[g], chunk, part);
        }
        chunks[g] = &record.chunks[chunk];
      }
      ForEachPart<Codes::kParts>([&]<int kPart>() {
        AddPart<Codes, kPart>(
            [&](const auto& step) { Codes::template ForEachPartVector<G, kPart>(chunks, step); }, x,
            xb, terms, scales[kPart], sums);
      });
    }
    // The super-block's chunks share one d_x (kQ8K): its first chunk's.
    ScaleSuperBlockSums(super_block_terms, sums, acc);
  }
  StoreTile(acc, w.rows, group, first_x_row, y);
}

// One group's super-block with its codes unpacked, for the passes of several tiles of x rows over
// it: each chunk's 8 weight vectors of codes and its parts' scale lanes.
struct UnpackedSuperBlock {
  __m512i q[kChunksPerSuperBlock][8];
  __m512 scales[kChunksPerSuperBlock][2];
};

template <typename Codes>
void UnpackSuperBlock(const typename Codes::Record& record, UnpackedSuperBlock& unpacked) {
  constexpr int64_t kChunkRecordBytes = sizeof(record) / kChunksPerSuperBlock;
  const __m512 d = HalfLanes(record.d);
  for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
    PrefetchAhead(reinterpret_cast<const uint8_t*>(&record) + chunk * kChunkRecordBytes,
                  kChunkRecordBytes);
    const typename Codes::Chunk* chunks[1] = {&record.chunks[chunk]};
    ForEachPart<Codes::kParts>([&]<int kPart>() {
      unpacked.scales[chunk][kPart] = Codes::PartScales(record, d, chunk, kPart);
      Codes::template ForEachPartVector<1, kPart>(
          chunks, [&]<int K>(const __m512i(&q)[1]) { unpacked.q[chunk][K] = q[0]; });
    });
  }
}

// Calls step.template operator()<K>(q) for the unpacked weight vectors K = kFirst ... kFirst +
// kCount − 1 of a chunk (q[g]: group g's).
template <int kFirst, int kCount, int G, int kStep = 0, typename Step>
inline void ForEachUnpackedVector(const UnpackedSuperBlock (&unpacked)[G], int chunk,
                                  const Step& step) {
  constexpr int K = kFirst + kStep;
  __m512i q[G];
#pragma GCC unroll 2
  for (int g = 0; g < G; ++g) q[g] = unpacked[g].q[chunk][K];
  step.template operator()<K>(q);
  if constexpr (kStep + 1 < kCount) {
    ForEachUnpackedVector<kFirst, kCount, G, kStep + 1>(unpacked, chunk, step);
  }
}

// acc[r] (G · 16 floats: group g's W row lanes at 16 g) += super-block b of G groups (their records
// and unpacked codes) times x rows [first, + R) of the tile, with the arithmetic of StreamingTile's
// super-block step.
template <typename Codes, int R, int G>
void AddUnpackedSuperBlock(const typename Codes::Record* const (&records)[G],
                           const UnpackedSuperBlock (&unpacked)[G],
                           const XTile<typename Codes::Terms, R>& x, int64_t b,
                           float (*acc)[G * kNibbleRowsPerGroup]) {
  using Terms = typename Codes::Terms;
  constexpr int64_t kTermsPerSuperBlock = kChunksPerSuperBlock / ChunksPerTerms<Terms>();
  const Terms* super_block_terms = x.terms + b * kTermsPerSuperBlock * x.stride;
  __m512 sums[G][R];
#pragma GCC unroll 2
  for (int g = 0; g < G; ++g) Codes::StartSums(*records[g], super_block_terms, sums[g]);
  for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
    const int64_t xb = b * kChunksPerSuperBlock + chunk;
    const Terms* terms = x.terms + xb / ChunksPerTerms<Terms>() * x.stride;
    ForEachPart<Codes::kParts>([&]<int kPart>() {
      constexpr int kVectors = 8 / Codes::kParts;
      __m512 scales[G];
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) scales[g] = unpacked[g].scales[chunk][kPart];
      AddPart<Codes, kPart>(
          [&](const auto& step) {
            ForEachUnpackedVector<kPart * kVectors, kVectors>(unpacked, chunk, step);
          },
          x, xb, terms, scales, sums);
    });
  }
  __m512 tile_acc[G][R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) tile_acc[g][r] = _mm512_load_ps(acc[r] + g * kNibbleRowsPerGroup);
  }
  ScaleSuperBlockSums(super_block_terms, sums, tile_acc);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) _mm512_store_ps(acc[r] + g * kNibbleRowsPerGroup, tile_acc[g][r]);
  }
}

// y: [m, w.rows] for W groups [group, + G), x rows [x_begin, x_end) (a block of ForEachNibbleTile's
// 64): each super-block of the groups unpacked once for all the block's x rows (passes of R, then
// 4, 2, 1 rows), their sums accumulated in memory.
template <typename Codes, int R, int G>
void UnpackedGroups(const PackedWeightView& w, const PreparedActivations& x, int64_t group,
                    int64_t x_begin, int64_t x_end, const typename Codes::Terms* block_terms,
                    float* y) {
  using Terms = typename Codes::Terms;
  using Record = typename Codes::Record;
  const int64_t num_records = w.cols / kSuperBlockSize;
  const int64_t stride = x_end - x_begin;
  alignas(64) UnpackedSuperBlock unpacked[G];
  alignas(64) float acc[kNibbleXRowsPerBlock][G * kNibbleRowsPerGroup];
  std::fill_n(&acc[0][0], stride * G * kNibbleRowsPerGroup, 0.0f);
  for (int64_t b = 0; b < num_records; ++b) {
    const Record* records[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      records[g] = reinterpret_cast<const Record*>(w.data) + (group + g) * num_records + b;
      UnpackSuperBlock<Codes>(*records[g], unpacked[g]);
    }
    auto passes = [&]<int kRows>(int64_t& first_x_row) {
      for (; first_x_row + kRows <= x_end; first_x_row += kRows) {
        const auto xt = XTile<Terms, kRows>::Of(x, block_terms, x_begin, stride, first_x_row);
        AddUnpackedSuperBlock<Codes, kRows, G>(records, unpacked, xt, b,
                                               acc + (first_x_row - x_begin));
      }
    };
    int64_t first_x_row = x_begin;
    passes.template operator()<R>(first_x_row);
    if constexpr (R > 4) passes.template operator()<4>(first_x_row);
    passes.template operator()<2>(first_x_row);
    passes.template operator()<1>(first_x_row);
  }
  for (int64_t i = 0; i < stride; ++i) {
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      _mm512_storeu_ps(y + (x_begin + i) * w.rows + (group + g) * kNibbleRowsPerGroup,
                       _mm512_load_ps(acc[i] + g * kNibbleRowsPerGroup));
    }
  }
}

// y: [m, w.rows] for the groups of W rows [row_begin, row_end), x in ForEachNibbleTile's blocks of
// 64 rows, two groups at a time in tiles of 6 x rows: each x broadcast serves both groups, and
// their codes are unpacked once per block (StreamingTile unpacks them again for every tile; two
// groups there would unpack twice per x broadcast). The same arithmetic as StreamingTile, in the
// same order, so the same bits.
template <typename Codes>
void UnpackedRows(const PackedWeightView& w, const PreparedActivations& x, int64_t row_begin,
                  int64_t row_end, float* y) {
  using Terms = typename Codes::Terms;
  const int64_t entries = x.cols / kQuantBlockSize / ChunksPerTerms<Terms>();
  const auto& terms = std::any_cast<const std::vector<Terms>&>(x.packed_terms);
  for (int64_t x_begin = 0; x_begin < x.m; x_begin += kNibbleXRowsPerBlock) {
    const int64_t x_end = std::min(x_begin + kNibbleXRowsPerBlock, x.m);
    const Terms* block_terms = terms.data() + x_begin * entries;
    const int64_t group_end = row_end / kNibbleRowsPerGroup;
    int64_t group = row_begin / kNibbleRowsPerGroup;
    for (; group + 2 <= group_end; group += 2) {
      UnpackedGroups<Codes, 6, 2>(w, x, group, x_begin, x_end, block_terms, y);
    }
    for (; group < group_end; ++group) {
      UnpackedGroups<Codes, kTileRows, 1>(w, x, group, x_begin, x_end, block_terms, y);
    }
  }
}

// Where the codes are unpacked once per block of x rows (UnpackedRows): from 32 x rows on, for the
// types whose tiles spend most on unpacking. `bench gemm`, share of the int8 dot peak at m = 64 /
// 256, unpacked against streaming: Q6_K 57–59 / 59–61 % against 49–51 %, Q3_K 62–66 / 63–65 %
// against 45–53 %, Q5_K 63–66 / 66–69 % against 60–61 / 61–62 %; at m = 16–32 both ways are within
// a few percent. Q4_K's nibbles and Q2_K's crumbs unpack cheaply and their mins cost more per pass:
// Q4_K 61–67 % against 66–67 % at m = 64, Q2_K 36–54 % against 58–62 %; they stream.
constexpr int64_t kMinUnpackedRows = 32;

template <typename Codes>
void KQuantRows(const PackedWeightView& w, const PreparedActivations& x, int64_t row_begin,
                int64_t row_end, float* y) {
  using Terms = typename Codes::Terms;
  if (Codes::kUnpackOnce && x.m >= kMinUnpackedRows) {
    UnpackedRows<Codes>(w, x, row_begin, row_end, y);
    return;
  }
  ForEachNibbleTile<Terms, kTileGroups, kTileRows>(
      x, row_begin, row_end,
      [&]<int R, int G>(int64_t group, int64_t first_x_row, const XTile<Terms, R>& xt) {
        StreamingTile<Codes, R, G>(w, group, first_x_row, xt, y);
      });
}

// The kernels of a K-quant whose records read as Codes, with the x terms Codes read.
template <typename Codes>
PackedKernels KQuantKernels() {
  return {PrepareNibbleTerms<typename Codes::Terms>, KQuantRows<Codes>};
}

}  // namespace

PackedKernels KQuantKernelsAvx512(GgmlType type) {
  switch (type) {
    case GgmlType::kQ2_K:
      return KQuantKernels<Q2_KCodes>();
    case GgmlType::kQ3_K:
      return KQuantKernels<Q3_KCodes>();
    case GgmlType::kQ4_K:
      return KQuantKernels<ScaleMinCodes<PackedQ4_KChunk>>();
    case GgmlType::kQ5_K:
      return KQuantKernels<ScaleMinCodes<PackedQ5_KChunk>>();
    case GgmlType::kQ6_K:
      return KQuantKernels<Q6_KCodes>();
    default:
      return {};
  }
}

}  // namespace vllm::kernels
