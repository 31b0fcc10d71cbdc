// The AVX2 kernels of the packed Q4_0 / Q4_1 / Q4_Z / Q5_0 / Q5_1 / IQ4_NL / IQ4_XS / MXFP4 weights
// (packed_nibble_layout.h), on the AVX-512 kernels' packing with their arithmetic in their order
// (cpu/packed_grid_tiles_avx512.h), so the same bits. A tile is one group × R x rows, a chunk's
// two halves of 8 W rows in turn. Per chunk, half and x row one exact integer dot, then
//   acc += (scale · d_x) · Σ value·x_q     (scale: d, d·(ls − 32) for IQ4_XS, 2^(e − 128) MXFP4)
//   acc += m · (d_x · Σ x_q)               (Q4_1, Q5_1: their mins m)
// The integer dots: Q4_0 / Q4_1 / Q5_0 / Q5_1 / Q4_Z take their unsigned codes (Q4_0's nibble q,
// value q − 8; Q5's q with the 5th bit; Q4_Z's nibble plus 32 − z) with the dot starting at −bias ·
// Σ x_q, as the AVX-512 kernels do with their biases; the grid types look their signed values up
// with vpshufb and move each value's sign onto x (|v| · sign(x, v), |v| ≤ 127), where the AVX-512
// kernels add 128 to the grid: the same integers either way. From kMinUnpackedRows x rows on, the
// types with unsigned codes unpack them once per 8 records of a group for a block of 64 x rows
// (UnpackedGroupTiles; Q4_0, `bench gemm` m = 512: 0.57× the streaming tiles' CPU time).
#include <immintrin.h>

#include <algorithm>
#include <type_traits>

#include "kernels/cpu/packed_nibbles_avx2.h"

namespace vllm::kernels {
namespace {

constexpr int32_t kQ4_0Bias = 8;  // Q4_0's nibble is its value plus 8

// What a type contributes to the tiles: its record, x terms, chunks per record, whether it has
// mins and signed values, the weight vectors whose int16 pair sums may be added before widening
// (kVectorsPerSum · 2 · max code · 127 < 2^15), a chunk's nibbles and scale lanes, and
// Map<K>(codes): weight vector K's values from its nibbles, for one chunk's half (the object).

// Q4_0 (q − 8) and Q4_1 (d q + m): the nibbles as they are.
template <typename RecordType, bool kHasMins>
struct PlainCodes {
  using Record = RecordType;
  using Terms = std::conditional_t<kHasMins, MinTerms, BiasedTerms<kQ4_0Bias>>;
  static constexpr int kChunks = 1;
  static constexpr bool kMins = kHasMins;
  static constexpr bool kSigned = false;
  static constexpr int kVectorsPerSum = 8;  // codes < 16
  PlainCodes(const Record&, int) {}
  static const uint8_t* Nibbles(const Record& record, int) { return record.nibbles; }
  static __m256 Scales(const Record& record, int, int half) { return HalfLanes256(record.d, half); }
  template <int K>
  __m256i Map(__m256i codes) const {
    return codes;
  }
};

// Q5_0 (q − 16) and Q5_1 (d q + m): the nibbles with their 5th bits (bit K of the plane's bytes).
template <typename RecordType>
class FifthBitCodes {
 public:
  using Record = RecordType;
  static constexpr bool kMins = std::is_same_v<Record, PackedQ5_1Record>;
  using Terms = std::conditional_t<kMins, MinTerms, BiasedTerms<kQ5_0Bias>>;
  static constexpr int kChunks = 1;
  static constexpr bool kSigned = false;
  static constexpr int kVectorsPerSum = 4;  // codes < 32
  FifthBitCodes(const Record& record, int half)
      : fifth_bits_(LoadHalf(record.codes.fifth_bits, half)) {}
  static const uint8_t* Nibbles(const Record& record, int) { return record.codes.nibbles; }
  static __m256 Scales(const Record& record, int, int half) { return HalfLanes256(record.d, half); }
  template <int K>
  __m256i Map(__m256i codes) const {
    return _mm256_or_si256(
        codes, _mm256_and_si256(MoveBits256<K, 4>(fifth_bits_), _mm256_set1_epi8(0x10)));
  }

 private:
  __m256i fifth_bits_;
};

// Q4_Z: the nibbles plus each row's bias byte 32 − z (codes < 48).
class ZeroPointCodes {
 public:
  using Record = PackedQ4_ZRecord;
  using Terms = BiasedTerms<kQ4_ZBias>;
  static constexpr int kChunks = 1;
  static constexpr bool kMins = false;
  static constexpr bool kSigned = false;
  static constexpr int kVectorsPerSum = 2;
  // vpshufb picks within each 128-bit lane, which holds the record's 16 bytes: 32-bit lane l of
  // half h reads byte 8 h + l.
  ZeroPointCodes(const Record& record, int half)
      : biases_(_mm256_shuffle_epi8(
            _mm256_broadcastsi128_si256(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(record.biases))),
            _mm256_add_epi8(_mm256_set_epi32(0x07070707, 0x06060606, 0x05050505, 0x04040404,
                                             0x03030303, 0x02020202, 0x01010101, 0x00000000),
                            _mm256_set1_epi8(static_cast<char>(kRowsPerHalf * half))))) {}
  static const uint8_t* Nibbles(const Record& record, int) { return record.nibbles; }
  static __m256 Scales(const Record& record, int, int half) { return HalfLanes256(record.d, half); }
  template <int K>
  __m256i Map(__m256i codes) const {
    return _mm256_add_epi8(codes, biases_);
  }

 private:
  __m256i biases_;
};

// The grid types' nibbles looked up in their 16 signed values (MXFP4's doubled).
template <typename RecordType, const int8_t (&kValues)[16]>
class GridCodes {
 public:
  using Record = RecordType;
  using Terms = BiasedTerms<0>;
  static constexpr int kChunks = std::is_same_v<Record, PackedIq4XsRecord> ? 8 : 1;
  static constexpr bool kMins = false;
  static constexpr bool kSigned = true;
  static constexpr int kVectorsPerSum = 1;  // |value| ≤ 127: one pair sum fills int16
  GridCodes(const Record&, int)
      : grid_(_mm256_broadcastsi128_si256(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(kValues)))) {}
  static const uint8_t* Nibbles(const Record& record, int chunk) {
    if constexpr (kChunks > 1) {
      return record.nibbles[chunk];
    } else {
      return record.nibbles;
    }
  }
  static __m256 Scales(const Record& record, int chunk, int half) {
    if constexpr (std::is_same_v<Record, PackedMxfp4Record>) {
      return E8m0HalfLanes256(record.e, half);
    } else if constexpr (kChunks > 1) {
      return ScaledLanes256(HalfLanes256(record.d, half), record.scales[chunk], half);
    } else {
      return HalfLanes256(record.d, half);
    }
  }
  template <int K>
  __m256i Map(__m256i codes) const {
    return _mm256_shuffle_epi8(grid_, codes);
  }

 private:
  __m256i grid_;
};

// GroupTiles' Sums: Add adds record b of a group (its kChunks chunks) to its tile's sums
// acc[half][r].
struct ChunkSums {
  template <typename Codes, int R>
  static void Add(const typename Codes::Record& record, int64_t b,
                  const XTile<typename Codes::Terms, R>& x, __m256 (&acc)[kHalvesPerGroup][R]) {
    constexpr int kChunks = Codes::kChunks;
    for (int chunk = 0; chunk < kChunks; ++chunk) {
      PrefetchChunk(record, chunk);
      const int64_t xb = b * kChunks + chunk;
      const typename Codes::Terms* terms = x.terms + xb * x.stride;
      const uint8_t* nibbles = Codes::Nibbles(record, chunk);
      for (int half = 0; half < kHalvesPerGroup; ++half) {
        const Codes codes(record, half);
        HalfDots<R, Codes::kVectorsPerSum> dots([&](int r) { return terms[r].start; });
        // Weight vectors 0, 4, 1, 5, ...: the low and high nibbles of one load in turn.
        ForEachIndex<8>([&]<int kIndex>() {
          constexpr int K = kIndex % 2 * 4 + kIndex / 2;
          const __m256i values = codes.template Map<K>(NibbleCodes<K>(nibbles, half));
          if constexpr (Codes::kSigned) {
            const __m256i magnitudes = _mm256_sign_epi8(values, values);
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) {
              dots.template Add<kIndex>(
                  r, magnitudes, _mm256_sign_epi8(BroadcastFour256<K>(x.blocks[r][xb]), values));
            }
          } else {
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) {
              dots.template Add<kIndex>(r, values, BroadcastFour256<K>(x.blocks[r][xb]));
            }
          }
        });
        const __m256 scales = Codes::Scales(record, chunk, half);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          acc[half][r] = _mm256_fmadd_ps(
              dots.Lanes(r), _mm256_mul_ps(scales, _mm256_set1_ps(terms[r].x_scale)), acc[half][r]);
          if constexpr (Codes::kMins) {
            acc[half][r] = _mm256_fmadd_ps(HalfLanes256(record.m, half),
                                           _mm256_set1_ps(terms[r].scaled_sum), acc[half][r]);
          }
        }
      }
    }
  }
};

// With many x rows (kMinUnpackedRows), the unsigned codes of a type with one chunk per record are
// unpacked once per kSpanRecords records of a group for a block of up to 64 x rows (Q4_0, Q4_1,
// Q4_Z, Q5_0, Q5_1: Map's codes, scale and min lanes), and tiles of the block's rows run over them
// from L1 with ChunkSums' arithmetic in its order, so the same bits.
constexpr int64_t kSpanRecords = 8;

struct UnpackedSpan256 {
  __m256i q[kSpanRecords][kHalvesPerGroup][8];
  __m256 scales[kSpanRecords][kHalvesPerGroup];
  __m256 mins[kSpanRecords][kHalvesPerGroup];
};

template <typename Codes>
void UnpackSpan256(const typename Codes::Record* records, int64_t num_records,
                   UnpackedSpan256& unpacked) {
  for (int64_t i = 0; i < num_records; ++i) {
    PrefetchChunk(records[i], 0);
#pragma GCC unroll 2
    for (int half = 0; half < kHalvesPerGroup; ++half) {
      const Codes codes(records[i], half);
      const uint8_t* nibbles = Codes::Nibbles(records[i], 0);
      ForEachIndex<8>([&]<int K>() {
        unpacked.q[i][half][K] = codes.template Map<K>(NibbleCodes<K>(nibbles, half));
      });
      unpacked.scales[i][half] = Codes::Scales(records[i], 0, half);
      if constexpr (Codes::kMins) unpacked.mins[i][half] = HalfLanes256(records[i].m, half);
    }
  }
}

// acc[r][8 half + l] (W row 8 half + l of the group, the tile's x row r) += the chunks of records
// [first, + num_records) of the span: ChunkSums' dots and FMAs, for both halves at once, each
// weight vector loaded once for the tile's R x rows.
template <typename Codes, int R>
void AddUnpackedSpan256(const UnpackedSpan256& unpacked, int64_t first, int64_t num_records,
                        const XTile<typename Codes::Terms, R>& x,
                        float (*acc)[kNibbleRowsPerGroup]) {
  __m256 sums[kHalvesPerGroup][R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int half = 0; half < kHalvesPerGroup; ++half) {
      sums[half][r] = _mm256_load_ps(acc[r] + half * kRowsPerHalf);
    }
  }
  for (int64_t i = 0; i < num_records; ++i) {
    const int64_t xb = first + i;
    const typename Codes::Terms* terms = x.terms + xb * x.stride;
    int32_t starts[R];
    const int8_t* x_values[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      starts[r] = terms[r].start;
      x_values[r] = x.blocks[r][xb].qs;
    }
    const __m256i* codes[kHalvesPerGroup] = {unpacked.q[i][0], unpacked.q[i][1]};
    __m256i dots[kHalvesPerGroup][R];
    UnpackedGroupDots<R, Codes::kVectorsPerSum, 8>(codes, x_values, starts, dots);
#pragma GCC unroll 2
    for (int half = 0; half < kHalvesPerGroup; ++half) {
      const __m256 scales = unpacked.scales[i][half];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        sums[half][r] =
            _mm256_fmadd_ps(_mm256_cvtepi32_ps(dots[half][r]),
                            _mm256_mul_ps(scales, _mm256_set1_ps(terms[r].x_scale)), sums[half][r]);
        if constexpr (Codes::kMins) {
          sums[half][r] = _mm256_fmadd_ps(unpacked.mins[i][half],
                                          _mm256_set1_ps(terms[r].scaled_sum), sums[half][r]);
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int half = 0; half < kHalvesPerGroup; ++half) {
      _mm256_store_ps(acc[r] + half * kRowsPerHalf, sums[half][r]);
    }
  }
}

// The streaming tiles below kMinUnpackedRows x rows, else spans of kSpanRecords records unpacked
// once per block of x rows (UnpackedGroupTiles).
template <typename Codes>
void NibbleRows256(const PackedWeightView& w, const PreparedActivations& x, int64_t row_begin,
                   int64_t row_end, float* y) {
  using Record = typename Codes::Record;
  if (x.m < kMinUnpackedRows) {
    GroupTiles<ChunkSums, Codes>(w, x, row_begin, row_end, y);
    return;
  }
  const int64_t num_records = w.cols / kQuantBlockSize;
  const int64_t num_spans = (num_records + kSpanRecords - 1) / kSpanRecords;
  alignas(32) UnpackedSpan256 unpacked;
  const auto span_size = [&](int64_t span) {
    return std::min(kSpanRecords, num_records - span * kSpanRecords);
  };
  UnpackedGroupTiles<typename Codes::Terms, UnpackedTileRows(Codes::kVectorsPerSum)>(
      x, row_begin, row_end, w.rows, num_spans,
      [&](int64_t group, int64_t span) {
        UnpackSpan256<Codes>(
            reinterpret_cast<const Record*>(w.data) + group * num_records + span * kSpanRecords,
            span_size(span), unpacked);
      },
      [&]<int R>(int64_t span, const XTile<typename Codes::Terms, R>& xt,
                 float(*acc)[kNibbleRowsPerGroup]) {
        AddUnpackedSpan256<Codes, R>(unpacked, span * kSpanRecords, span_size(span), xt, acc);
      },
      y);
}

template <typename Codes>
PackedKernels UnpackedNibbleKernels256() {
  return {PrepareNibbleTerms<typename Codes::Terms>, NibbleRows256<Codes>};
}

}  // namespace

PackedKernels NibbleKernelsAvx2(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0:
      return UnpackedNibbleKernels256<PlainCodes<PackedIq4NlRecord, false>>();
    case GgmlType::kQ4_1:
      return UnpackedNibbleKernels256<PlainCodes<PackedQ4_1Record, true>>();
    case GgmlType::kQ4_Z:
      return UnpackedNibbleKernels256<ZeroPointCodes>();
    case GgmlType::kQ5_0:
      return UnpackedNibbleKernels256<FifthBitCodes<PackedQ5_0Record>>();
    case GgmlType::kQ5_1:
      return UnpackedNibbleKernels256<FifthBitCodes<PackedQ5_1Record>>();
    case GgmlType::kIQ4_NL:
      return GroupKernels<ChunkSums, GridCodes<PackedIq4NlRecord, kIq4NlValues>>();
    case GgmlType::kIQ4_XS:
      return GroupKernels<ChunkSums, GridCodes<PackedIq4XsRecord, kIq4NlValues>>();
    case GgmlType::kMXFP4:
      return GroupKernels<ChunkSums, GridCodes<PackedMxfp4Record, kMxfp4Values>>();
    default:
      return {};
  }
}

}  // namespace vllm::kernels
