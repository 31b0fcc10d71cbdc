// What the AVX-512 VNNI kernels of the nibble-packed types (packed_nibble_layout.h) share beyond
// cpu/packed_nibble_tiles.h's terms and tile loop: the weight vectors of a chunk's nibbles and the
// integer dots. Included by each kernel's AVX-512-flagged translation unit (internal linkage).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <any>
#include <cstring>
#include <vector>

#include "kernels/cpu/packed_nibble_tiles.h"

namespace vllm::kernels {
namespace {

// x values [4k, 4k + 4) of a chunk in every 32-bit lane (vpdpbusd's signed operand).
template <int K>
inline __m512i BroadcastFour(const BlockQ8_0& chunk) {
  int32_t four;
  std::memcpy(&four, chunk.qs + 4 * K, sizeof(four));
  return _mm512_set1_epi32(four);
}

// The integer dots of one chunk of one W group with R x rows, in a tile of G groups. Below 8
// independent dots per tile (R · G), each row's dot is split over several partial sums (weight
// vector K feeds partial K % kChains) so that its 8 vpdpbusd do not all wait on one another;
// integer sums are exact, so the split never changes a result.
template <int R, int G = 1>
class ChunkDots {
 public:
  static constexpr int kChains = R * G >= 8 ? 1 : R * G >= 4 ? 2 : 4;

  ChunkDots() : ChunkDots([](int) { return 0; }) {}

  // Row r's dot starts at start(r) (a bias correction).
  template <typename Start>
  explicit ChunkDots(const Start& start) {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      partials_[0][r] = _mm512_set1_epi32(start(r));
      for (int chain = 1; chain < kChains; ++chain) partials_[chain][r] = _mm512_setzero_si512();
    }
  }

  // Adds weight vector K (unsigned) times x row r's 4 broadcast values (signed).
  template <int K>
  void Add(int r, __m512i weights, __m512i x_four) {
    partials_[K % kChains][r] = _mm512_dpbusd_epi32(partials_[K % kChains][r], weights, x_four);
  }

  // Row r's dot as f32 lanes (exact: |dot| < 2^24).
  __m512 Lanes(int r) const {
    __m512i total = partials_[0][r];
    for (int chain = 1; chain < kChains; ++chain) {
      total = _mm512_add_epi32(total, partials_[chain][r]);
    }
    return _mm512_cvtepi32_ps(total);
  }

 private:
  __m512i partials_[kChains][R];
};

// The start of a tile of W groups [group, + G): each group's first record (a group holds
// num_records) and zeroed accumulators.
template <typename Record, int R, int G>
inline void StartTile(const PackedWeightView& w, int64_t group, int64_t num_records,
                      const Record* (&records)[G], __m512 (&acc)[G][R]) {
#pragma GCC unroll 2
  for (int g = 0; g < G; ++g) {
    records[g] = reinterpret_cast<const Record*>(w.data) + (group + g) * num_records;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[g][r] = _mm512_setzero_ps();
  }
}

// Adds weight vector K of each group (q[g]) times x row r's 4 values of chunk xb to dots[g][r],
// for the tile's R rows: each x broadcast serves the G groups.
template <int K, typename Terms, int R, int G>
inline void AddTileDots(const XTile<Terms, R>& x, int64_t xb, const __m512i (&q)[G],
                        ChunkDots<R, G> (&dots)[G]) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const __m512i x_four = BroadcastFour<K>(x.blocks[r][xb]);
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) dots[g].template Add<K>(r, q[g], x_four);
  }
}

// Calls step.template operator()<K>(codes) for the 8 weight vectors K of a chunk's nibbles in each
// of G groups (codes[g]: unsigned bytes 0..15, values [4K, 4K + 4) of each row of group g), each
// 64-byte step loaded once: K = 0, 4, 1, 5, 2, 6, 3, 7.
template <int G, int kStep = 0, typename Step>
inline void ForEachNibbleVector(const uint8_t* const (&nibbles)[G], const Step& step) {
  const __m512i low_mask = _mm512_set1_epi8(0x0f);
  __m512i low[G];
  __m512i high[G];
#pragma GCC unroll 2
  for (int g = 0; g < G; ++g) {
    const __m512i packed = _mm512_loadu_si512(nibbles[g] + 64 * kStep);
    low[g] = _mm512_and_si512(packed, low_mask);
    high[g] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), low_mask);
  }
  step.template operator()<kStep>(low);
  step.template operator()<kStep + 4>(high);
  if constexpr (kStep < 3) ForEachNibbleVector<G, kStep + 1>(nibbles, step);
}

// As ForEachNibbleVector, for a lookup that reads only bits 0..3 of each code byte: the low
// nibbles as loaded and the high ones shifted down, the bits above them left unmasked.
template <int G, int kStep = 0, typename Step>
inline void ForEachRawNibbleVector(const uint8_t* const (&nibbles)[G], const Step& step) {
  __m512i low[G];
  __m512i high[G];
#pragma GCC unroll 2
  for (int g = 0; g < G; ++g) {
    low[g] = _mm512_loadu_si512(nibbles[g] + 64 * kStep);
    high[g] = _mm512_srli_epi16(low[g], 4);
  }
  step.template operator()<kStep>(low);
  step.template operator()<kStep + 4>(high);
  if constexpr (kStep < 3) ForEachRawNibbleVector<G, kStep + 1>(nibbles, step);
}

// Calls step.template operator()<K>(codes) as ForEachNibbleVector does, for one half of a chunk's
// weight vectors: K = 0 ... 3 (the low nibbles, values 0 ... 15 of each row) or, with kHigh, K = 4
// ... 7 (the high nibbles, values 16 ... 31).
template <int G, bool kHigh, int kStep = 0, typename Step>
inline void ForEachNibbleHalf(const uint8_t* const (&nibbles)[G], const Step& step) {
  const __m512i low_mask = _mm512_set1_epi8(0x0f);
  __m512i codes[G];
#pragma GCC unroll 2
  for (int g = 0; g < G; ++g) {
    __m512i packed = _mm512_loadu_si512(nibbles[g] + 64 * kStep);
    if constexpr (kHigh) packed = _mm512_srli_epi16(packed, 4);
    codes[g] = _mm512_and_si512(packed, low_mask);
  }
  step.template operator()<kHigh ? kStep + 4 : kStep>(codes);
  if constexpr (kStep < 3) ForEachNibbleHalf<G, kHigh, kStep + 1>(nibbles, step);
}

// A bit field of `plane` moved from bit kFrom to bit kTo of every byte (the other bits: garbage).
// The shifts work on 16-bit words: shifting left by s fills bits [0, s) of a word's high byte from
// its low byte, shifting right by s bits [8 - s, 8) of the low byte from the high byte. A field
// that lies inside its byte before and after the move never meets those bits, so it stays clean.
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

// The f32 lanes of 16 fp16 values.
inline __m512 HalfLanes(const uint16_t* halves) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(halves)));
}

// d times 16 bytes (a sub-block scale or min per row), as f32 lanes (exact: d fp16, |byte| < 256).
inline __m512 ScaledLanes(__m512 d, const uint8_t* bytes) {
  return _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(
                              _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes)))));
}
inline __m512 ScaledLanes(__m512 d, const int8_t* bytes) {
  return _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
                              _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes)))));
}

// The start of a super-block's sums, −dmin · Σ_s mn_s · Σ_s x_q over its 2 kPairs sub-blocks s
// (an exact integer dot, kPairs vpdpwssd: |Σ| <= 8 · 63 · 4096 for Q4_K, 16 · 15 · 2048 for Q2_K,
// both < 2^24), for the R x rows of a tile. min_bytes[j][2l + i] holds row l's mn of sub-block
// 2j + i in its bits [kMinShift, 8).
template <int kMinShift, int kPairs, int R>
inline void StartMinSums(const uint8_t (&min_bytes)[kPairs][2 * kNibbleRowsPerGroup],
                         const uint16_t* dmin, const MinPairTerms<kPairs>* terms,
                         __m512 (&sums)[R]) {
  __m512i min_pairs[kPairs];
  for (int j = 0; j < kPairs; ++j) {
    min_pairs[j] = _mm512_srli_epi16(
        _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(min_bytes[j]))),
        kMinShift);
  }
  const __m512 negative_dmin = _mm512_sub_ps(_mm512_setzero_ps(), HalfLanes(dmin));
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    __m512i min_dot = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int j = 0; j < kPairs; ++j) {
      min_dot =
          _mm512_dpwssd_epi32(min_dot, min_pairs[j], _mm512_set1_epi32(terms[r].sum_pairs[j]));
    }
    sums[r] = _mm512_mul_ps(_mm512_cvtepi32_ps(min_dot), negative_dmin);
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

// acc[g][r] += d_x of row r · sums[g][r], at the end of a K-quant super-block.
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

// Stores a tile's accumulators: y[first_x_row + r][16 (group + g), + 16).
template <int R, int G>
inline void StoreTile(const __m512 (&acc)[G][R], int64_t rows, int64_t group, int64_t first_x_row,
                      float* y) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      _mm512_storeu_ps(y + (first_x_row + r) * rows + (group + g) * kNibbleRowsPerGroup, acc[g][r]);
    }
  }
}

}  // namespace
}  // namespace vllm::kernels
