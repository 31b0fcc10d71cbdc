// The AVX-512 VNNI kernels for packed Q4_K / Q5_K weights (packed_nibble_layout.h), with x
// quantized with one scale d_x per super-block of 256 columns (ActivationFormat::kQ8K). A tile is
// G groups of 16 W rows (one per lane) × R x rows. Per 32-column chunk, 8 vpdpbusd per x row
// multiply the unsigned codes q of the 16 rows (4 per lane) by 4 broadcast x quants each; with the
// chunk's per-row scale lanes computed once for all R x rows, one f32 operation per x row adds the
// chunk to the super-block's sum, and one per super-block scales that by d_x:
//   sum = −dmin · Σ_c mn_c · Σ_c x_q  +  Σ_c (d·sc_c) · Σ_c q·x_q
//   acc += d_x · sum
// (Σ_c: over chunk c; the mins term is one integer dot per super-block, 4 vpdpwssd over pairs of
// mins and x sums). The K-quants of 16-value sub-blocks: linear_packed_k16_avx512.cc.
#include <immintrin.h>

#include <type_traits>

#include "kernels/cpu/packed_nibbles_avx512.h"

namespace vllm::kernels {
namespace {

// Q4_K / Q5_K's x terms: a super-block's d_x and its chunks' x sums in pairs.
using ScaleMinTerms = MinPairTerms<kChunksPerSuperBlock / 2>;

// The tiles: one group of 16 W rows × 8 x rows (8 accumulators, 8 super-block sums, 8 integer
// dots). (Two groups side by side would share each x broadcast, but fit only 4 x rows in the
// registers, which doubles the code unpacking per dot.)
constexpr int kScaleMinTileGroups = 1;
constexpr int kScaleMinTileRows = 8;

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
      StartMinSums</*kMinShift=*/0>(records[g][b].min_pairs, records[g][b].dmin, terms, sums[g]);
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

void LinearRowsPackedQ4_KAvx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  ScaleMinRows<PackedQ4_KChunk>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedQ5_KAvx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  ScaleMinRows<PackedQ5_KChunk>(w, x, row_begin, row_end, y);
}

}  // namespace vllm::kernels
