// The AVX2 kernels for the packed K-quants (Q2_K ... Q6_K; packed_nibble_layout.h), on the AVX-512
// kernels' packing and with their arithmetic in their order (cpu/linear_packed_kquants_avx512.cc),
// so the same bits: x quantized with one scale d_x per super-block of 256 columns (kQ8K); per
// super-block and half of a group (8 W rows, one per lane),
//   Q4_K, Q5_K:  sum = −dmin · Σ_c mn_c · Σ_c x_q  +  Σ_c (d·sc_c) · Σ_c q·x_q
//   Q6_K, Q3_K:  sum = Σ_h (d·sc_h) · Σ_h (q − bias)·x_q       (bias 32 / 4)
//   Q2_K:        sum = −dmin · Σ_h mn_h · Σ_h x_q  +  Σ_h (d·sc_h) · Σ_h q·x_q
//   acc += d_x · sum
// (Σ_c: over chunk c, Σ_h: over half chunk h; every Σ·x_q an exact integer dot: vpmaddubsw and
// vpmaddwd for the codes, vpmaddwd for the mins against pairs of x sums, the bias as the dot's
// start.) A streaming tile is one group × R x rows: per super-block, its first half's 8 rows over
// the 8 chunks, then the second half's from L1. From kMinUnpackedRows x rows on (all but Q2_K),
// each super-block of a group is unpacked once for a block of 64 x rows and tiles of both halves ×
// 3 x rows (1 for Q6_K, Q5_K, Q3_K, whose pair sums cover fewer vectors than a part) run over its
// codes from L1 (UnpackedGroupTiles): `bench gemm` m = 512, CPU time in the kernel against the
// streaming tiles, Q4_K 0.56×, Q5_K 0.58×, Q6_K 0.86×, Q3_K 0.84×.
#include <immintrin.h>

#include <type_traits>

#include "kernels/cpu/packed_nibbles_avx2.h"

namespace vllm::kernels {
namespace {

// The start of a super-block's sums for half `half`, −dmin · Σ_s mn_s · Σ_s x_q over its 2 kPairs
// sub-blocks s (an exact integer dot, kPairs vpmaddwd; StartMinSums in packed_nibbles_avx512.h),
// for the R x rows of a tile. min_bytes[j][2l + i] holds row l's mn of sub-block 2j + i in its
// bits [kMinShift, 8).
template <int kMinShift, int kPairs, int R>
inline void StartMinSums256(const uint8_t (&min_bytes)[kPairs][2 * kNibbleRowsPerGroup],
                            const uint16_t* dmin, const MinPairTerms<kPairs>* terms, int half,
                            __m256 (&sums)[R]) {
  __m256i min_pairs[kPairs];
  for (int j = 0; j < kPairs; ++j) {
    min_pairs[j] = _mm256_srli_epi16(
        _mm256_cvtepu8_epi16(_mm_loadu_si128(
            reinterpret_cast<const __m128i*>(min_bytes[j] + 2 * kRowsPerHalf * half))),
        kMinShift);
  }
  const __m256 negative_dmin = _mm256_sub_ps(_mm256_setzero_ps(), HalfLanes256(dmin, half));
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    __m256i min_dot = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int j = 0; j < kPairs; ++j) {
      min_dot = _mm256_add_epi32(
          min_dot, _mm256_madd_epi16(min_pairs[j], _mm256_set1_epi32(terms[r].sum_pairs[j])));
    }
    sums[r] = _mm256_mul_ps(_mm256_cvtepi32_ps(min_dot), negative_dmin);
  }
}

// What a type contributes to the tiles (as the Codes of linear_packed_kquants_avx512.cc): its
// record, x terms, parts per chunk (kParts: 1 or 2, of 8 / kParts weight vectors and one scale
// each), the start of a super-block's sums and of a part's integer dots, a part's scale lanes, and
// Vector<K>(chunk, half): weight vector K's unsigned codes. kVectorsPerSum: vectors whose int16
// pair sums may be added before widening (kVectorsPerSum · 2 · max code · 127 < 2^15).

// Q4_K and Q5_K: one part per chunk with a 6-bit scale, 6-bit mins.
template <typename ChunkType>
struct ScaleMinCodes {
  using Record = PackedScaleMinRecord<ChunkType>;
  using Chunk = ChunkType;
  using Terms = MinPairTerms<kChunksPerSuperBlock / 2>;
  static constexpr bool kFifthBits = std::is_same_v<ChunkType, PackedQ5_KChunk>;
  static constexpr int kParts = 1;
  static constexpr int kVectorsPerSum = kFifthBits ? 4 : 8;  // codes < 32 / < 16
  static constexpr bool kUnpackOnce = true;
  template <int R>
  static void StartSums(const Record& record, const Terms* terms, int half, __m256 (&sums)[R]) {
    StartMinSums256</*kMinShift=*/0>(record.min_pairs, record.dmin, terms, half, sums);
  }
  template <int kPart>
  static int32_t DotStart(const Terms&) {
    return 0;
  }
  static __m256 PartScales(const Record& record, __m256 d, int chunk, int, int half) {
    return ScaledLanes256(d, record.scales[chunk], half);
  }
  template <int K>
  static __m256i Vector(const Chunk& chunk, int half) {
    const __m256i low = NibbleCodes<K>(chunk.nibbles, half);
    if constexpr (!kFifthBits) {
      return low;
    } else {
      const __m256i fifth = MoveBits256<K, 4>(LoadHalf(chunk.fifth_bits, half));
      return _mm256_or_si256(low, _mm256_and_si256(fifth, _mm256_set1_epi8(0x10)));
    }
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
  static void StartSums(const Record&, const Terms*, int, __m256 (&sums)[R]) {
    for (int r = 0; r < R; ++r) sums[r] = _mm256_setzero_ps();
  }
  template <int kPart>
  static int32_t DotStart(const Terms& terms) {
    return terms.starts[kPart];
  }
  static __m256 PartScales(const Record& record, __m256 d, int chunk, int part, int half) {
    return ScaledLanes256(d, record.scales[2 * chunk + part], half);
  }
};

// Q6_K: q = low nibble + 16 · high crumb (codes < 64), value q − 32, sc int8.
struct Q6_KCodes : BiasedHalves<PackedQ6_KRecord, 32> {
  using Chunk = PackedQ6_KChunk;
  static constexpr int kVectorsPerSum = 2;
  template <int K>
  static __m256i Vector(const Chunk& chunk, int half) {
    const __m256i crumbs = MoveBits256<2 * (K % 4), 4>(LoadHalf(chunk.high_crumbs[K / 4], half));
    return _mm256_or_si256(NibbleCodes<K>(chunk.nibbles, half),
                           _mm256_and_si256(crumbs, _mm256_set1_epi8(0x30)));
  }
};

// Q3_K and Q2_K's low 2 bits of weight vector K (bits [2j, 2j + 2) of its half's crumb plane,
// j = K % 4).
template <int K>
inline __m256i CrumbCodes(const uint8_t (&low_crumbs)[2][64], int half) {
  const __m256i crumbs = MoveBits256<2 * (K % 4), 0>(LoadHalf(low_crumbs[K / 4], half));
  return _mm256_and_si256(crumbs, _mm256_set1_epi8(0x03));
}

// Q3_K: q = low crumb + 4 · third bit (codes < 8), value q − 4, sc − 32 int8.
struct Q3_KCodes : BiasedHalves<PackedQ3_KRecord, 4> {
  using Chunk = PackedQ3_KChunk;
  static constexpr int kVectorsPerSum = 4;
  template <int K>
  static __m256i Vector(const Chunk& chunk, int half) {
    const __m256i third = MoveBits256<K, 2>(LoadHalf(chunk.third_bits, half));
    return _mm256_or_si256(CrumbCodes<K>(chunk.low_crumbs, half),
                           _mm256_and_si256(third, _mm256_set1_epi8(0x04)));
  }
};

// Q2_K: q = crumb (codes < 4), value d · sc · q − dmin · mn, sc and mn 4-bit (in one byte per
// half).
struct Q2_KCodes {
  using Record = PackedQ2_KRecord;
  using Chunk = PackedQ2_KChunk;
  using Terms = MinPairTerms<kChunksPerSuperBlock>;
  static constexpr int kParts = 2;
  static constexpr int kVectorsPerSum = 4;
  static constexpr bool kUnpackOnce = false;
  template <int R>
  static void StartSums(const Record& record, const Terms* terms, int half, __m256 (&sums)[R]) {
    StartMinSums256</*kMinShift=*/4>(record.scale_min_pairs, record.dmin, terms, half, sums);
  }
  template <int kPart>
  static int32_t DotStart(const Terms&) {
    return 0;
  }
  // The chunk's pairs widened: 32-bit lane l holds row 8 half + l's byte of part 0 in bits [0, 8)
  // and of part 1 in bits [16, 24); sc is the low nibble of each.
  static __m256 PartScales(const Record& record, __m256 d, int chunk, int part, int half) {
    const __m256i pair = _mm256_cvtepu8_epi16(_mm_loadu_si128(
        reinterpret_cast<const __m128i*>(record.scale_min_pairs[chunk] + 2 * kRowsPerHalf * half)));
    const __m256i scales =
        _mm256_and_si256(_mm256_srli_epi32(pair, 16 * part), _mm256_set1_epi32(0x0f));
    return _mm256_mul_ps(d, _mm256_cvtepi32_ps(scales));
  }
  template <int K>
  static __m256i Vector(const Chunk& chunk, int half) {
    return CrumbCodes<K>(chunk.low_crumbs, half);
  }
};

// The weight vector a part takes as its kIndex-th: a whole chunk's in the order 0, 4, 1, 5, ...
// (the low and high nibbles of one 32-byte load in turn), a half chunk's in order.
template <int kPart, int kVectors>
constexpr int VectorOf(int index) {
  return kVectors == 8 ? index % 2 * 4 + index / 2 : kPart * kVectors + index;
}

// Adds part kPart of a chunk's half `half` (scale lanes `scales`) to the super-block's sums of the
// tile's R x rows.
template <typename Codes, int kPart, int R>
inline void AddPart(const typename Codes::Chunk& chunk, int half,
                    const XTile<typename Codes::Terms, R>& x, int64_t xb,
                    const typename Codes::Terms* terms, __m256 scales, __m256 (&sums)[R]) {
  constexpr int kVectors = 8 / Codes::kParts;
  HalfDots<R, Codes::kVectorsPerSum> dots(
      [&](int r) { return Codes::template DotStart<kPart>(terms[r]); });
  ForEachIndex<kVectors>([&]<int kIndex>() {
    constexpr int K = VectorOf<kPart, kVectors>(kIndex);
    const __m256i codes = Codes::template Vector<K>(chunk, half);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      dots.template Add<kIndex>(r, codes, BroadcastFour256<K>(x.blocks[r][xb]));
    }
  });
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) sums[r] = _mm256_fmadd_ps(dots.Lanes(r), scales, sums[r]);
}

// GroupTiles' Sums: Add adds super-block b of a group (record) to its tile's sums acc[half][r].
struct SuperBlockSums {
  template <typename Codes, int R>
  static void Add(const typename Codes::Record& record, int64_t b,
                  const XTile<typename Codes::Terms, R>& x, __m256 (&acc)[kHalvesPerGroup][R]) {
    using Terms = typename Codes::Terms;
    constexpr int64_t kTermsPerSuperBlock = kChunksPerSuperBlock / ChunksPerTerms<Terms>();
    const Terms* super_block_terms = x.terms + b * kTermsPerSuperBlock * x.stride;
    for (int half = 0; half < kHalvesPerGroup; ++half) {
      const __m256 d = HalfLanes256(record.d, half);
      __m256 sums[R];
      Codes::StartSums(record, super_block_terms, half, sums);
      for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
        if (half == 0) PrefetchChunk(record, chunk);
        const int64_t xb = b * kChunksPerSuperBlock + chunk;
        const Terms* terms = x.terms + xb / ChunksPerTerms<Terms>() * x.stride;
        ForEachIndex<Codes::kParts>([&]<int kPart>() {
          AddPart<Codes, kPart>(record.chunks[chunk], half, x, xb, terms,
                                Codes::PartScales(record, d, chunk, kPart, half), sums);
        });
      }
      // The super-block's chunks share one d_x (kQ8K): its first chunk's.
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        acc[half][r] =
            _mm256_fmadd_ps(sums[r], _mm256_set1_ps(super_block_terms[r].x_scale), acc[half][r]);
      }
    }
  }
};

// With many x rows (kMinUnpackedRows), each super-block of a group is unpacked once (its codes and
// scale lanes) for a block of up to 64 x rows, and tiles of the block's rows run over it from L1
// with the arithmetic of SuperBlockSums in its order, so the same bits.
struct UnpackedSuperBlock256 {
  __m256i q[kHalvesPerGroup][kChunksPerSuperBlock][8];
  __m256 scales[kHalvesPerGroup][kChunksPerSuperBlock][2];
};

template <typename Codes>
void UnpackSuperBlock256(const typename Codes::Record& record, UnpackedSuperBlock256& unpacked) {
  for (int half = 0; half < kHalvesPerGroup; ++half) {
    const __m256 d = HalfLanes256(record.d, half);
    for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
      if (half == 0) PrefetchChunk(record, chunk);
      const typename Codes::Chunk& codes = record.chunks[chunk];
      ForEachIndex<8>(
          [&]<int K>() { unpacked.q[half][chunk][K] = Codes::template Vector<K>(codes, half); });
      for (int part = 0; part < Codes::kParts; ++part) {
        unpacked.scales[half][chunk][part] = Codes::PartScales(record, d, chunk, part, half);
      }
    }
  }
}

// acc[r][8 half + l] (W row 8 half + l of the group, the tile's x row r) += d_x · super-block b's
// sum: SuperBlockSums' sums and dots (start, parts in order, one FMA each), for both halves at
// once, each weight vector loaded once for the tile's R x rows.
template <typename Codes, int R>
void AddUnpackedSuperBlock256(const typename Codes::Record& record,
                              const UnpackedSuperBlock256& unpacked,
                              const XTile<typename Codes::Terms, R>& x, int64_t b,
                              float (*acc)[kNibbleRowsPerGroup]) {
  using Terms = typename Codes::Terms;
  constexpr int64_t kTermsPerSuperBlock = kChunksPerSuperBlock / ChunksPerTerms<Terms>();
  const Terms* super_block_terms = x.terms + b * kTermsPerSuperBlock * x.stride;
  __m256 sums[kHalvesPerGroup][R];
#pragma GCC unroll 2
  for (int half = 0; half < kHalvesPerGroup; ++half) {
    Codes::StartSums(record, super_block_terms, half, sums[half]);
  }
  for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
    const int64_t xb = b * kChunksPerSuperBlock + chunk;
    const Terms* terms = x.terms + xb / ChunksPerTerms<Terms>() * x.stride;
    const int8_t* x_values[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) x_values[r] = x.blocks[r][xb].qs;
    ForEachIndex<Codes::kParts>([&]<int kPart>() {
      constexpr int kVectors = 8 / Codes::kParts;
      int32_t starts[R];
      const int8_t* part_x[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        starts[r] = Codes::template DotStart<kPart>(terms[r]);
        part_x[r] = x_values[r] + 4 * kPart * kVectors;
      }
      const __m256i* codes[kHalvesPerGroup] = {unpacked.q[0][chunk] + kPart * kVectors,
                                               unpacked.q[1][chunk] + kPart * kVectors};
      __m256i dots[kHalvesPerGroup][R];
      UnpackedGroupDots<R, Codes::kVectorsPerSum, kVectors>(codes, part_x, starts, dots);
#pragma GCC unroll 2
      for (int half = 0; half < kHalvesPerGroup; ++half) {
        const __m256 scales = unpacked.scales[half][chunk][kPart];
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          sums[half][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dots[half][r]), scales, sums[half][r]);
        }
      }
    });
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const __m256 x_scale = _mm256_set1_ps(super_block_terms[r].x_scale);
#pragma GCC unroll 2
    for (int half = 0; half < kHalvesPerGroup; ++half) {
      float* out = acc[r] + half * kRowsPerHalf;
      _mm256_store_ps(out, _mm256_fmadd_ps(sums[half][r], x_scale, _mm256_load_ps(out)));
    }
  }
}

// The streaming tiles below kMinUnpackedRows x rows (and for Q2_K, whose crumbs unpack cheaply
// while its mins cost more per pass, as in the AVX-512 kernels), else each super-block unpacked
// once per block of x rows (UnpackedGroupTiles).
template <typename Codes>
void KQuantRows256(const PackedWeightView& w, const PreparedActivations& x, int64_t row_begin,
                   int64_t row_end, float* y) {
  using Record = typename Codes::Record;
  if constexpr (Codes::kUnpackOnce) {
    if (x.m >= kMinUnpackedRows) {
      const int64_t num_records = w.cols / kSuperBlockSize;
      const Record* record = nullptr;  // the super-block unpacked
      alignas(32) UnpackedSuperBlock256 unpacked;
      UnpackedGroupTiles<typename Codes::Terms, UnpackedTileRows(Codes::kVectorsPerSum)>(
          x, row_begin, row_end, w.rows, num_records,
          [&](int64_t group, int64_t b) {
            record = reinterpret_cast<const Record*>(w.data) + group * num_records + b;
            UnpackSuperBlock256<Codes>(*record, unpacked);
          },
          [&]<int R>(int64_t b, const XTile<typename Codes::Terms, R>& xt,
                     float(*acc)[kNibbleRowsPerGroup]) {
            AddUnpackedSuperBlock256<Codes, R>(*record, unpacked, xt, b, acc);
          },
          y);
      return;
    }
  }
  GroupTiles<SuperBlockSums, Codes>(w, x, row_begin, row_end, y);
}

template <typename Codes>
PackedKernels KQuantKernels256() {
  return {PrepareNibbleTerms<typename Codes::Terms>, KQuantRows256<Codes>};
}

}  // namespace

PackedKernels KQuantKernelsAvx2(GgmlType type) {
  switch (type) {
    case GgmlType::kQ2_K:
      return KQuantKernels256<Q2_KCodes>();
    case GgmlType::kQ3_K:
      return KQuantKernels256<Q3_KCodes>();
    case GgmlType::kQ4_K:
      return KQuantKernels256<ScaleMinCodes<PackedQ4_KChunk>>();
    case GgmlType::kQ5_K:
      return KQuantKernels256<ScaleMinCodes<PackedQ5_KChunk>>();
    case GgmlType::kQ6_K:
      return KQuantKernels256<Q6_KCodes>();
    default:
      return {};
  }
}

}  // namespace vllm::kernels
