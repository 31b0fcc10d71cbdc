// What the AVX2 kernels of the nibble-packed types (packed_nibble_layout.h) share beyond
// cpu/packed_nibble_tiles.h's terms and tile loop. They read the AVX-512 kernels' packing: a group
// of 16 W rows is two halves of 8 rows, half h being bytes [32 h, 32 h + 32) of every 64-byte step
// or bit plane (row 8 h + l in 32-bit lane l) and bytes [8 h, 8 h + 8) of every [16 rows] field.
// Without vpdpbusd, vpmaddubsw multiplies the unsigned codes by x's signed bytes into pairwise
// int16 sums and vpmaddwd by ones adds the pairs into int32 lanes: the same exact integer dots.
// Included by each kernel's AVX2-flagged translation unit (internal linkage).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <any>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/cpu/packed_nibble_tiles.h"

namespace vllm::kernels {
namespace {

constexpr int kHalvesPerGroup = 2;
constexpr int64_t kRowsPerHalf = kNibbleRowsPerGroup / kHalvesPerGroup;  // 8, one per lane
// x rows per tile: each unpacked weight vector meets 4 x rows (4 int16 pair sums, 4 int32 dots
// and 4 sums in registers beside the codes and the x broadcast).
constexpr int kTileRows = 4;

// Calls f.template operator()<I>() for I = 0 ... N − 1.
template <int N, typename F>
inline void ForEachIndex(const F& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) { (f.template operator()<I>(), ...); }
  (std::make_integer_sequence<int, N>());
}

// x values [4K, 4K + 4) of a chunk in every 32-bit lane (vpmaddubsw's signed operand).
template <int K>
inline __m256i BroadcastFour256(const BlockQ8_0& chunk) {
  int32_t four;
  std::memcpy(&four, chunk.qs + 4 * K, sizeof(four));
  return _mm256_set1_epi32(four);
}

// Half `half`'s 32 bytes of a 64-byte step or bit plane.
inline __m256i LoadHalf(const uint8_t* bytes64, int half) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes64 + 32 * half));
}

// A bit field of `plane` moved from bit kFrom to bit kTo of every byte (the other bits: garbage),
// by 16-bit word shifts: a field inside its byte before and after the move stays clean.
template <int kFrom, int kTo>
inline __m256i MoveBits256(__m256i plane) {
  if constexpr (kTo > kFrom) {
    return _mm256_slli_epi16(plane, kTo - kFrom);
  } else if constexpr (kTo < kFrom) {
    return _mm256_srli_epi16(plane, kFrom - kTo);
  } else {
    return plane;
  }
}

// Nibble code K of a chunk's half (values [4K, 4K + 4) of each of its 8 rows), bits 0 ... 3.
template <int K>
inline __m256i NibbleCodes(const uint8_t* nibbles, int half) {
  __m256i codes = LoadHalf(nibbles + 64 * (K % 4), half);
  if constexpr (K >= 4) codes = _mm256_srli_epi16(codes, 4);
  return _mm256_and_si256(codes, _mm256_set1_epi8(0x0f));
}

// The f32 lanes of half `half` of 16 fp16 values ([16 rows]).
inline __m256 HalfLanes256(const uint16_t* halves, int half) {
  return _mm256_cvtph_ps(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(halves + kRowsPerHalf * half)));
}

// d times half `half` of 16 bytes ([16 rows]: a sub-block scale or min per row), as f32 lanes
// (exact: d fp16, |byte| < 256).
inline __m256 ScaledLanes256(__m256 d, const uint8_t* bytes, int half) {
  return _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(
                              reinterpret_cast<const __m128i*>(bytes + kRowsPerHalf * half)))));
}
inline __m256 ScaledLanes256(__m256 d, const int8_t* bytes, int half) {
  return _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(
                              reinterpret_cast<const __m128i*>(bytes + kRowsPerHalf * half)))));
}

// E8m0ToFp32Half of half `half` of 16 exponent bytes ([16 rows]): (e − 1) << 23 as f32 bits, or
// the subnormal 0x00200000 << e for e < 2.
inline __m256 E8m0HalfLanes256(const uint8_t* exponents, int half) {
  const __m256i e = _mm256_cvtepu8_epi32(
      _mm_loadl_epi64(reinterpret_cast<const __m128i*>(exponents + kRowsPerHalf * half)));
  const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
  const __m256i subnormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
  return _mm256_castsi256_ps(
      _mm256_blendv_epi8(normal, subnormal, _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e)));
}

// Integer dots of 8 W rows (one per 32-bit lane) with R x rows, one weight vector at a time:
// vpmaddubsw's int16 pair sums of kVectorsPerSum consecutive vectors are added in int16 (the
// caller's bound: kVectorsPerSum · 2 · max code · 127 < 2^15, so they never saturate), then
// widened by vpmaddwd into the int32 dots. Exact integers, so the grouping never changes a dot.
template <int R, int kVectorsPerSum>
class HalfDots {
 public:
  // Row r's dot starts at start(r) (a bias correction).
  template <typename Start>
  explicit HalfDots(const Start& start) {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) dots_[r] = _mm256_set1_epi32(start(r));
  }

  // Adds weight vector number kIndex of the dot (unsigned codes) times x row r's 4 broadcast
  // values (signed).
  template <int kIndex>
  void Add(int r, __m256i codes, __m256i x_four) {
    const __m256i pairs = _mm256_maddubs_epi16(codes, x_four);
    if constexpr (kIndex % kVectorsPerSum == 0) {
      pairs_[r] = pairs;
    } else {
      pairs_[r] = _mm256_add_epi16(pairs_[r], pairs);
    }
    if constexpr (kIndex % kVectorsPerSum == kVectorsPerSum - 1) {
      dots_[r] = _mm256_add_epi32(dots_[r], _mm256_madd_epi16(pairs_[r], _mm256_set1_epi16(1)));
    }
  }

  // Row r's dot as f32 lanes (exact: |dot| < 2^24).
  __m256 Lanes(int r) const { return _mm256_cvtepi32_ps(dots_[r]); }

 private:
  __m256i dots_[R];
  __m256i pairs_[R];
};

// HalfDots for both halves of a group at once over unpacked codes, in plain registers: the dots
// of kVectors weight vectors, codes[h][k] half h's unsigned codes of vector k, with x rows whose
// 4 values of vector k are x[r] + 4 k (signed), row r's dots starting at start[r]. Exact
// integers, as HalfDots' (the same bound on kVectorsPerSum).
template <int R, int kVectorsPerSum, int kVectors>
[[gnu::always_inline]] inline void UnpackedGroupDots(const __m256i* const (&codes)[kHalvesPerGroup],
                                                     const int8_t* const (&x)[R],
                                                     const int32_t (&start)[R],
                                                     __m256i (&dots)[kHalvesPerGroup][R]) {
  __m256i pairs[kHalvesPerGroup][R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    dots[0][r] = dots[1][r] = _mm256_set1_epi32(start[r]);
  }
#pragma GCC unroll 8
  for (int k = 0; k < kVectors; ++k) {
    const __m256i low_rows = _mm256_load_si256(codes[0] + k);
    const __m256i high_rows = _mm256_load_si256(codes[1] + k);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      int32_t four;
      std::memcpy(&four, x[r] + 4 * k, sizeof(four));
      const __m256i x_four = _mm256_set1_epi32(four);
      const __m256i low_pairs = _mm256_maddubs_epi16(low_rows, x_four);
      const __m256i high_pairs = _mm256_maddubs_epi16(high_rows, x_four);
      if (k % kVectorsPerSum == 0) {
        pairs[0][r] = low_pairs;
        pairs[1][r] = high_pairs;
      } else {
        pairs[0][r] = _mm256_add_epi16(pairs[0][r], low_pairs);
        pairs[1][r] = _mm256_add_epi16(pairs[1][r], high_pairs);
      }
      // An empty asm keeps each pair sum a chain: GCC otherwise reassociates the int16 adds into
      // a tree, computes every product of the dot first and spills them (16 registers).
      asm("" : "+x"(pairs[0][r]), "+x"(pairs[1][r]));
      if (k % kVectorsPerSum == kVectorsPerSum - 1) {
        const __m256i ones = _mm256_set1_epi16(1);
        dots[0][r] = _mm256_add_epi32(dots[0][r], _mm256_madd_epi16(pairs[0][r], ones));
        dots[1][r] = _mm256_add_epi32(dots[1][r], _mm256_madd_epi16(pairs[1][r], ones));
      }
    }
  }
}

// Writes a tile's sums: acc[half][r] holds x row first_x_row + r's outputs for the 8 weight rows
// group · 16 + half · 8 + [0, 8); y: [m, num_rows].
template <int R>
inline void StoreTileSums(const __m256 (&acc)[kHalvesPerGroup][R], int64_t num_rows, int64_t group,
                          int64_t first_x_row, float* y) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    for (int half = 0; half < kHalvesPerGroup; ++half) {
      _mm256_storeu_ps(
          y + (first_x_row + r) * num_rows + group * kNibbleRowsPerGroup + half * kRowsPerHalf,
          acc[half][r]);
    }
  }
}

// Asks for chunk `chunk` of a record's Record::kCols / 32 equal parts ahead (PrefetchAhead).
template <typename Record>
inline void PrefetchChunk(const Record& record, int chunk) {
  constexpr int64_t kChunkBytes = sizeof(Record) / (Record::kCols / kQuantBlockSize);
  PrefetchAhead(reinterpret_cast<const uint8_t*>(&record) + chunk * kChunkBytes, kChunkBytes);
}

// The tile of W group `group` × x rows [first_x_row, + R): its sums acc[half][r] start at 0, take
// Sums::template Add<Codes, R>(record, its index b, x, acc) for each of the group's Codes::Record
// in order, and go to y (StoreTileSums).
template <typename Sums, typename Codes, int R>
void GroupTile(const PackedWeightView& w, int64_t group, int64_t first_x_row,
               const XTile<typename Codes::Terms, R>& x, float* y) {
  using Record = typename Codes::Record;
  const int64_t num_records = w.cols / Record::kCols;
  const Record* records = reinterpret_cast<const Record*>(w.data) + group * num_records;
  __m256 acc[kHalvesPerGroup][R];
  for (int half = 0; half < kHalvesPerGroup; ++half) {
    for (int r = 0; r < R; ++r) acc[half][r] = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < num_records; ++b) Sums::template Add<Codes, R>(records[b], b, x, acc);
  StoreTileSums<R>(acc, w.rows, group, first_x_row, y);
}

// The tile driver of every AVX2 packed kernel. y: [m, w.rows] for the groups of W rows
// [row_begin, row_end), in ForEachNibbleTile's tiles of one group × R ≤ kTileRows x rows
// (GroupTile).
template <typename Sums, typename Codes>
void GroupTiles(const PackedWeightView& w, const PreparedActivations& x, int64_t row_begin,
                int64_t row_end, float* y) {
  using Terms = typename Codes::Terms;
  ForEachNibbleTile<Terms, /*kGroups=*/1, kTileRows>(
      x, row_begin, row_end,
      [&]<int R, int G>(int64_t group, int64_t first_x_row, const XTile<Terms, R>& xt) {
        GroupTile<Sums, Codes, R>(w, group, first_x_row, xt, y);
      });
}

// x rows from which the kernels that unpack their codes once per block of x rows take over from
// the streaming tiles (GroupTiles), which unpack every weight vector again for each kTileRows x
// rows and overflow AVX2's 16 registers with codes, masks, dots, pair sums and sums.
constexpr int64_t kMinUnpackedRows = 16;
// x rows per tile over unpacked codes, both halves of a group at once, for a type whose int16 pair
// sums take kVectorsPerSum weight vectors: 3 where one pair sum spans a whole part (6 pair sums,
// 6 sums, 2 weight vectors and an x broadcast in registers), else 1 (the int32 dots stay live
// beside the pair sums: 2 x rows spilled them).
constexpr int UnpackedTileRows(int vectors_per_sum) { return vectors_per_sum == 8 ? 3 : 1; }

// y: [m, w.rows] for the groups of W rows [row_begin, row_end), x in ForEachNibbleTile's blocks of
// 64 rows: per group, each of its num_spans spans of records unpacked once for the block
// (unpack(group, span)), then tiles of kRows x rows (then 2, then 1) over it
// (add.template operator()<R>(span, XTile, acc): acc[r][16] the sums of the tile's x row r, in
// memory), the sums written to y at the end. The tiling never changes an element's arithmetic.
template <typename Terms, int kRows, typename Unpack, typename Add>
void UnpackedGroupTiles(const PreparedActivations& x, int64_t row_begin, int64_t row_end,
                        int64_t num_rows, int64_t num_spans, const Unpack& unpack, const Add& add,
                        float* y) {
  const int64_t entries = x.cols / kQuantBlockSize / ChunksPerTerms<Terms>();
  const auto& terms = std::any_cast<const std::vector<Terms>&>(x.packed_terms);
  alignas(32) float acc[kNibbleXRowsPerBlock][kNibbleRowsPerGroup];
  for (int64_t x_begin = 0; x_begin < x.m; x_begin += kNibbleXRowsPerBlock) {
    const int64_t x_end = std::min(x_begin + kNibbleXRowsPerBlock, x.m);
    const int64_t stride = x_end - x_begin;
    const Terms* block_terms = terms.data() + x_begin * entries;
    for (int64_t group = row_begin / kNibbleRowsPerGroup; group < row_end / kNibbleRowsPerGroup;
         ++group) {
      std::fill_n(&acc[0][0], stride * kNibbleRowsPerGroup, 0.0f);
      for (int64_t span = 0; span < num_spans; ++span) {
        unpack(group, span);
        auto passes = [&]<int R>(int64_t& first_x_row) {
          for (; first_x_row + R <= x_end; first_x_row += R) {
            add.template operator()<R>(
                span, XTile<Terms, R>::Of(x, block_terms, x_begin, stride, first_x_row),
                acc + (first_x_row - x_begin));
          }
        };
        int64_t first_x_row = x_begin;
        passes.template operator()<kRows>(first_x_row);
        if constexpr (kRows > 2) passes.template operator()<2>(first_x_row);
        passes.template operator()<1>(first_x_row);
      }
      for (int64_t i = 0; i < stride; ++i) {
        float* out = y + (x_begin + i) * num_rows + group * kNibbleRowsPerGroup;
        for (int half = 0; half < kHalvesPerGroup; ++half) {
          _mm256_storeu_ps(out + half * kRowsPerHalf, _mm256_load_ps(acc[i] + half * kRowsPerHalf));
        }
      }
    }
  }
}

// The kernels of a type whose records read as Codes: GroupTiles, with the x terms Codes read.
template <typename Sums, typename Codes>
PackedKernels GroupKernels() {
  return {PrepareNibbleTerms<typename Codes::Terms>, GroupTiles<Sums, Codes>};
}

}  // namespace
}  // namespace vllm::kernels
