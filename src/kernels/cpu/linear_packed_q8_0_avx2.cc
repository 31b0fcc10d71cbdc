// The AVX2 kernel of packed Q8_0 weights (packed_q8_layout.h), on the AVX-512 kernel's packing
// (cpu/linear_packed_avx512.cc) with its arithmetic in its order, so the same bits. A group of 16
// W rows is read as two halves of 8 (cpu/packed_nibbles_avx2.h: bytes [32 h, 32 h + 32) of each
// 64-byte step, scales [8 h, 8 h + 8) of each block's 16), in its tiles of one group × R x rows.
// Per block, half and x row one exact integer dot, then acc += (d_w · d_x) · dot. The packed
// quants are w + 128: flipping their top bit gives w back, and vpmaddubsw takes |w| (unsigned:
// 128 for −128) times x's quants with w's sign moved onto them. x's quants lie in [−127, 127], so
// negating one never wraps and a pair of products stays within int16: the dot is Σ w · x_q, the
// integer the AVX-512 kernel's vpdpbusd reaches from its start at −128 · Σ x_q.
#include <immintrin.h>

#include "kernels/cpu/packed_nibbles_avx2.h"
#include "kernels/packed_q8_layout.h"

namespace vllm::kernels {
namespace {

static_assert(kPackedRowsPerGroup == kNibbleRowsPerGroup);
constexpr int64_t kBlockBytes = PackedBytesPerGroupBlock(GgmlType::kQ8_0);
using Terms = BiasedTerms<0>;  // d_x, and a dot that starts at 0

// The tile of W group `group` × x rows [first_x_row, + R).
template <int R>
void GroupTile(const PackedWeightView& w, int64_t group, int64_t first_x_row,
               const XTile<Terms, R>& x, float* y) {
  const int64_t num_blocks = w.cols / kQuantBlockSize;
  const uint8_t* quants = w.data + group * num_blocks * kBlockBytes;
  const uint16_t* scales = reinterpret_cast<const uint16_t*>(
                               w.data + PackedQuantBytes(GgmlType::kQ8_0, w.rows, w.cols)) +
                           group * num_blocks * kPackedRowsPerGroup;
  __m256 acc[kHalvesPerGroup][R];
  for (int half = 0; half < kHalvesPerGroup; ++half) {
    for (int r = 0; r < R; ++r) acc[half][r] = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
    const uint8_t* block = quants + b * kBlockBytes;
    PrefetchAhead(block, kBlockBytes);
    const Terms* terms = x.terms + b * x.stride;
    for (int half = 0; half < kHalvesPerGroup; ++half) {
      HalfDots<R, /*kVectorsPerSum=*/1> dots([&](int r) { return terms[r].start; });
      ForEachIndex<8>([&]<int K>() {
        const __m256i values =
            _mm256_xor_si256(LoadHalf(block + 64 * K, half), _mm256_set1_epi8(-128));
        const __m256i magnitudes = _mm256_sign_epi8(values, values);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          dots.template Add<K>(r, magnitudes,
                               _mm256_sign_epi8(BroadcastFour256<K>(x.blocks[r][b]), values));
        }
      });
      const __m256 w_scales = HalfLanes256(scales + b * kPackedRowsPerGroup, half);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        acc[half][r] = _mm256_fmadd_ps(
            dots.Lanes(r), _mm256_mul_ps(w_scales, _mm256_set1_ps(terms[r].x_scale)), acc[half][r]);
      }
    }
  }
  StoreTileSums<R>(acc, w.rows, group, first_x_row, y);
}

}  // namespace

void PrepareQ8_0TermsAvx2(PreparedActivations& x) { PrepareNibbleTerms<Terms>(x); }

void LinearRowsPackedQ8_0Avx2(const PackedWeightView& w, const PreparedActivations& x,
                              int64_t row_begin, int64_t row_end, float* y) {
  ForEachNibbleTile<Terms, /*kGroups=*/1, kTileRows>(
      x, row_begin, row_end,
      [&]<int R, int G>(int64_t group, int64_t first_x_row, const XTile<Terms, R>& xt) {
        GroupTile<R>(w, group, first_x_row, xt, y);
      });
}

}  // namespace vllm::kernels
