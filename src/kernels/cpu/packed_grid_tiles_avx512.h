// The AVX-512 VNNI tiles of the packed Q4_0 / Q4_1 / Q4_Z / Q5_0 / Q5_1 / IQ4_NL / IQ4_XS / MXFP4
// weights (packed_nibble_layout.h, Q4_0 packed as IQ4_NL with the linear grid −8 ... 7),
// included by linear_packed_iq4_avx512.cc and, compiled with AVX512_VBMI,
// linear_packed_grid_vbmi_avx512.cc
// (internal linkage: each translation unit has its own). A tile is G groups of 16 W rows (one per
// lane) × R x rows. Each weight vector's 4-bit codes become unsigned bytes (vpdpbusd's first
// operand; the broadcast x quants are the signed one) that may carry a bias: the grid types map
// them through their 16-value grid with one byte lookup to grid + 128; Q5_0 / Q5_1 add their 5th
// bit (q = code + 16 · bit; Q5_0's value q − 16); Q4_1's codes are its q; Q4_Z adds each row's
// 32 − z to its codes (value q − z: the code plus 32 − z, less 32). The integer dot of each
// 32-column chunk starts at −bias · Σ x_q, which cancels the bias exactly. Then, with the chunk's
// per-row scale lanes computed once for all R x rows:
//   acc += (scale · d_x) · Σ value·x_q,   scale: d (Q4_0, Q4_1, Q4_Z, Q5_0, Q5_1, IQ4_NL),
//                                          d·(ls − 32) (IQ4_XS), 2^(e − 128) (MXFP4, its grid
//                                          doubled)
//   acc += m · (d_x · Σ x_q)              (Q4_1, Q5_1: their mins m)
// two f32 operations per chunk and x row beside the 8 vpdpbusd (four with mins). Both lookups give
// the same bytes, so both translation units give the same bits.
#pragma once

#include <immintrin.h>

#include <array>
#include <type_traits>

#include "kernels/cpu/packed_nibbles_avx512.h"

namespace vllm::kernels {
namespace {

constexpr int32_t kGridBias = 128;  // grid values are stored plus 128, as unsigned bytes
// The tile: 2 groups of 16 W rows × 6 x rows (12 accumulators and 12 integer dots).
constexpr int kGridTileGroups = 2;
constexpr int kGridTileRows = 6;

constexpr std::array<uint8_t, 16> BiasedGrid(const int8_t (&grid)[16]) {
  std::array<uint8_t, 16> biased{};
  for (int i = 0; i < 16; ++i) biased[i] = static_cast<uint8_t>(grid[i] + kGridBias);
  return biased;
}
constexpr int8_t kQ4_0Values[16] = {-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7};
constexpr std::array<uint8_t, 16> kBiasedQ4_0Grid = BiasedGrid(kQ4_0Values);
constexpr std::array<uint8_t, 16> kBiasedIq4NlGrid = BiasedGrid(kIq4NlValues);
constexpr std::array<uint8_t, 16> kBiasedMxfp4Grid = BiasedGrid(kMxfp4Values);

// E8m0ToFp32Half of 16 exponent bytes: (e − 1) << 23 as f32 bits, or the subnormal
// 0x00200000 << e for e < 2.
inline __m512 E8m0HalfLanes(const uint8_t* exponents) {
  const __m512i e =
      _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(exponents)));
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
  const __mmask16 subnormal = _mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2));
  return _mm512_castsi512_ps(
      _mm512_mask_sllv_epi32(normal, subnormal, _mm512_set1_epi32(0x00200000), e));
}

template <typename Record>
constexpr int kChunksPerRecord =
    std::is_same_v<Record, PackedIq4XsRecord> ? kChunksPerSuperBlock : 1;

// A chunk's nibbles and its scale lanes.
inline const uint8_t* ChunkNibbles(const PackedIq4NlRecord& record, int) { return record.nibbles; }
inline const uint8_t* ChunkNibbles(const PackedMxfp4Record& record, int) { return record.nibbles; }
inline const uint8_t* ChunkNibbles(const PackedQ4_1Record& record, int) { return record.nibbles; }
inline const uint8_t* ChunkNibbles(const PackedQ4_ZRecord& record, int) { return record.nibbles; }
inline const uint8_t* ChunkNibbles(const PackedQ5_0Record& record, int) {
  return record.codes.nibbles;
}
inline const uint8_t* ChunkNibbles(const PackedQ5_1Record& record, int) {
  return record.codes.nibbles;
}
inline const uint8_t* ChunkNibbles(const PackedIq4XsRecord& record, int chunk) {
  return record.nibbles[chunk];
}
inline __m512 ChunkScales(const PackedIq4NlRecord& record, int) { return HalfLanes(record.d); }
inline __m512 ChunkScales(const PackedMxfp4Record& record, int) { return E8m0HalfLanes(record.e); }
inline __m512 ChunkScales(const PackedQ5_0Record& record, int) { return HalfLanes(record.d); }
inline __m512 ChunkScales(const PackedQ4_1Record& record, int) { return HalfLanes(record.d); }
inline __m512 ChunkScales(const PackedQ4_ZRecord& record, int) { return HalfLanes(record.d); }
inline __m512 ChunkScales(const PackedQ5_1Record& record, int) { return HalfLanes(record.d); }
inline __m512 ChunkScales(const PackedIq4XsRecord& record, int chunk) {
  return ScaledLanes(HalfLanes(record.d), record.scales[chunk]);
}

// The grid types' codes: weight vector K's codes of group g through the grid, plus 128. With
// AVX512_VBMI compiled in (linear_packed_grid_vbmi_avx512.cc), vpermb looks up 64 bytes that
// repeat the grid, so the bits above a code (kRawNibbles: the other nibble, unmasked) select the
// same value and the nibbles need no mask; else vpshufb, on masked codes.
template <const std::array<uint8_t, 16>& kGrid, int G>
class GridCodes {
 public:
  using Terms = BiasedTerms<kGridBias>;
  static constexpr bool kMins = false;
#ifdef __AVX512VBMI__
  static constexpr bool kRawNibbles = true;
#else
  static constexpr bool kRawNibbles = false;
#endif
  GridCodes()
      : grid_(_mm512_broadcast_i32x4(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(kGrid.data())))) {}
  template <typename Record>
  void Load(int, const Record&) {}
  template <int K>
  __m512i Map(int, __m512i codes) const {
#ifdef __AVX512VBMI__
    return _mm512_permutexvar_epi8(codes, grid_);
#else
    return _mm512_shuffle_epi8(grid_, codes);
#endif
  }

 private:
  __m512i grid_;
};

// Q4_1's codes: weight vector K's nibbles as they are.
template <int G>
class Q4_1Codes {
 public:
  using Terms = MinTerms;
  static constexpr bool kMins = true;
  static constexpr bool kRawNibbles = false;
  void Load(int, const PackedQ4_1Record&) {}
  template <int K>
  __m512i Map(int, __m512i codes) const {
    return codes;
  }
};

// Q4_Z's codes: weight vector K's nibbles of group g plus each row's bias byte 32 − z (the
// record's 16 bytes, byte l repeated over lane l's 4 bytes).
template <int G>
class ZeroPointCodes {
 public:
  using Terms = BiasedTerms<kQ4_ZBias>;
  static constexpr bool kMins = false;
  static constexpr bool kRawNibbles = false;
  void Load(int g, const PackedQ4_ZRecord& record) {
    // vpshufb picks within each 128-bit lane, which holds the 16 bytes: lane l reads byte l.
    const __m512i lane_bytes =
        _mm512_set_epi32(0x0f0f0f0f, 0x0e0e0e0e, 0x0d0d0d0d, 0x0c0c0c0c, 0x0b0b0b0b, 0x0a0a0a0a,
                         0x09090909, 0x08080808, 0x07070707, 0x06060606, 0x05050505, 0x04040404,
                         0x03030303, 0x02020202, 0x01010101, 0x00000000);
    biases_[g] = _mm512_shuffle_epi8(
        _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(record.biases))),
        lane_bytes);
  }
  template <int K>
  __m512i Map(int g, __m512i codes) const {
    return _mm512_add_epi8(codes, biases_[g]);
  }

 private:
  __m512i biases_[G];
};

// Q5_0's and Q5_1's codes: weight vector K's low nibbles of group g with their 5th bits (bit K of
// each byte of the chunk's plane) as bit 4; Record: PackedQ5_0Record (q − 16) or PackedQ5_1Record
// (d q + m).
template <typename Record, int G>
class FifthBitCodes {
 public:
  static constexpr bool kMins = std::is_same_v<Record, PackedQ5_1Record>;
  using Terms = std::conditional_t<kMins, MinTerms, BiasedTerms<kQ5_0Bias>>;
  static constexpr bool kRawNibbles = false;
  void Load(int g, const Record& record) {
    fifth_bits_[g] = _mm512_loadu_si512(record.codes.fifth_bits);
  }
  template <int K>
  __m512i Map(int g, __m512i codes) const {
    return _mm512_or_si512(
        codes, _mm512_and_si512(MoveBits<K, 4>(fifth_bits_[g]), _mm512_set1_epi8(0x10)));
  }

 private:
  __m512i fifth_bits_[G];
};

// Tile of W groups [group, + G) × x rows [first_x_row, + R); Codes: the type's code map.
template <typename Record, typename Codes, int R, int G>
void NibbleTile(const PackedWeightView& w, int64_t group, int64_t first_x_row,
                const XTile<typename Codes::Terms, R>& x, float* y) {
  constexpr int kChunks = kChunksPerRecord<Record>;
  constexpr int64_t kChunkRecordBytes = sizeof(Record) / kChunks;
  Codes codes_map;
  const int64_t num_records = w.cols / (kChunks * kQuantBlockSize);
  const Record* records[G];
  __m512 acc[G][R];
  StartTile(w, group, num_records, records, acc);
  for (int64_t b = 0; b < num_records; ++b) {
    for (int chunk = 0; chunk < kChunks; ++chunk) {
      const int64_t xb = b * kChunks + chunk;
      const typename Codes::Terms* terms = x.terms + xb * x.stride;
      const uint8_t* nibbles[G];
      __m512 scales[G];
      __m512 mins[G];
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) {
        const Record& record = records[g][b];
        PrefetchAhead(reinterpret_cast<const uint8_t*>(&record) + chunk * kChunkRecordBytes,
                      kChunkRecordBytes);
        scales[g] = ChunkScales(record, chunk);
        if constexpr (Codes::kMins) mins[g] = HalfLanes(record.m);
        nibbles[g] = ChunkNibbles(record, chunk);
        codes_map.Load(g, record);
      }
      ChunkDots<R, G> dots[G];
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) dots[g] = ChunkDots<R, G>([&](int r) { return terms[r].start; });
      const auto step = [&]<int K>(const __m512i(&codes)[G]) {
        __m512i q[G];
#pragma GCC unroll 2
        for (int g = 0; g < G; ++g) q[g] = codes_map.template Map<K>(g, codes[g]);
        AddTileDots<K>(x, xb, q, dots);
      };
      if constexpr (Codes::kRawNibbles) {
        ForEachRawNibbleVector<G>(nibbles, step);
      } else {
        ForEachNibbleVector<G>(nibbles, step);
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m512 x_scale = _mm512_set1_ps(terms[r].x_scale);
#pragma GCC unroll 2
        for (int g = 0; g < G; ++g) {
          acc[g][r] =
              _mm512_fmadd_ps(dots[g].Lanes(r), _mm512_mul_ps(scales[g], x_scale), acc[g][r]);
          if constexpr (Codes::kMins) {
            acc[g][r] = _mm512_fmadd_ps(mins[g], _mm512_set1_ps(terms[r].scaled_sum), acc[g][r]);
          }
        }
      }
    }
  }
  StoreTile(acc, w.rows, group, first_x_row, y);
}

// Codes<G>: the type's code map for tiles of G groups.
template <typename Record, template <int> typename Codes>
void NibbleRows(const PackedWeightView& w, const PreparedActivations& x, int64_t row_begin,
                int64_t row_end, float* y) {
  using Terms = typename Codes<1>::Terms;
  ForEachNibbleTile<Terms, kGridTileGroups, kGridTileRows>(
      x, row_begin, row_end,
      [&]<int R, int G>(int64_t group, int64_t first_x_row, const XTile<Terms, R>& xt) {
        NibbleTile<Record, Codes<G>, R, G>(w, group, first_x_row, xt, y);
      });
}

template <const std::array<uint8_t, 16>& kGrid>
struct Grid {
  template <int G>
  using Codes = GridCodes<kGrid, G>;
};
template <typename Record>
struct FifthBit {
  template <int G>
  using Codes = FifthBitCodes<Record, G>;
};

// The kernels of a type packed as `Record`s whose codes map as Codes<G>, with the x terms they
// read.
template <typename Record, template <int> typename Codes>
PackedKernels NibbleKernels() {
  return {PrepareNibbleTerms<typename Codes<1>::Terms>, NibbleRows<Record, Codes>};
}

// The grid types' kernels of this translation unit (its lookups: vpshufb, or vpermb with VBMI); {}
// for any other type.
inline PackedKernels GridKernels(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0:
      return NibbleKernels<PackedIq4NlRecord, Grid<kBiasedQ4_0Grid>::Codes>();
    case GgmlType::kIQ4_NL:
      return NibbleKernels<PackedIq4NlRecord, Grid<kBiasedIq4NlGrid>::Codes>();
    case GgmlType::kIQ4_XS:
      return NibbleKernels<PackedIq4XsRecord, Grid<kBiasedIq4NlGrid>::Codes>();
    case GgmlType::kMXFP4:
      return NibbleKernels<PackedMxfp4Record, Grid<kBiasedMxfp4Grid>::Codes>();
    default:
      return {};
  }
}

}  // namespace
}  // namespace vllm::kernels
