// The AVX-512 kernels for packed Q8_0 and BF16 weights (packed_q8_layout.h). One vpdpbusd
// multiplies 4 consecutive columns of 16 W rows (one per lane) by the same 4 x values
// (broadcast), so a block of 32 columns is 8 vpdpbusd into one integer accumulator per x row,
// then one conversion and one fused multiply-add by d_w · d_x. The packed quants are unsigned
// (w + 128); the accumulator starts at -128 · Σ x_q of the block, which cancels the bias exactly.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/packed_q8_layout.h"

namespace vllm::kernels {
namespace {

constexpr int64_t kXRowsPerBlock = 64;  // x rows that stay in L2 while W groups stream by
constexpr int64_t kPrefetchBytes = 2048;

inline __m512i BroadcastFour(const int8_t* bytes) {
  int32_t four;
  std::memcpy(&four, bytes, sizeof(four));
  return _mm512_set1_epi32(four);
}

// y rows [first_x_row, + R), columns [16 g, + 16) = W group g · x rows.
template <GgmlType kType, int R>
void GroupTimesRows(const PackedWeightView& w, const PreparedActivations& x, int64_t group,
                    int64_t first_x_row, float* y) {
  constexpr int64_t kGroupBlockBytes = PackedBytesPerGroupBlock(kType);
  constexpr int32_t kBias = 128;
  const int64_t num_blocks = w.cols / 32;
  const uint8_t* quants = w.data + group * num_blocks * kGroupBlockBytes;
  const auto* scales =
      reinterpret_cast<const uint16_t*>(w.data + PackedQuantBytes(kType, w.rows, w.cols)) +
      group * num_blocks * kPackedRowsPerGroup;
  const BlockQ8_0* x_blocks[R];
  const float* x_scales[R];
  const int32_t* x_sums[R];
  __m512 acc[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    x_blocks[r] = x.q8.data() + (first_x_row + r) * num_blocks;
    x_scales[r] = x.q8_scales.data() + (first_x_row + r) * num_blocks;
    x_sums[r] = x.q8_sums.data() + (first_x_row + r) * num_blocks;
    acc[r] = _mm512_setzero_ps();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
    const uint8_t* block_quants = quants + b * kGroupBlockBytes;
    _mm_prefetch(reinterpret_cast<const char*>(block_quants) + kPrefetchBytes, _MM_HINT_T0);
    const __m512 w_scales = _mm512_cvtph_ps(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(scales + b * kPackedRowsPerGroup)));
    __m512i dots[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) dots[r] = _mm512_set1_epi32(-kBias * x_sums[r][b]);
    auto step = [&](__m512i wq, int k) {
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        dots[r] = _mm512_dpbusd_epi32(dots[r], wq, BroadcastFour(x_blocks[r][b].qs + 4 * k));
      }
    };
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) step(_mm512_loadu_si512(block_quants + k * 64), k);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 scale = _mm512_mul_ps(w_scales, _mm512_set1_ps(x_scales[r][b]));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dots[r]), scale, acc[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    _mm512_storeu_ps(y + (first_x_row + r) * w.rows + group * kPackedRowsPerGroup, acc[r]);
  }
}

// The BF16 form: per block 16 vdpbf16ps per x row, alternating between two accumulators (the same
// pattern for every R) so consecutive steps do not wait on each other.
template <int R>
void Bf16GroupTimesRows(const PackedWeightView& w, const PreparedActivations& x, int64_t group,
                        int64_t first_x_row, float* y) {
  constexpr int64_t kGroupBlockBytes = PackedBytesPerGroupBlock(GgmlType::kBF16);
  const int64_t num_blocks = w.cols / 32;
  const uint8_t* values = w.data + group * num_blocks * kGroupBlockBytes;
  const uint16_t* x_rows[R];
  __m512 even[R];
  __m512 odd[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    x_rows[r] = x.bf16.data() + (first_x_row + r) * w.cols;
    even[r] = _mm512_setzero_ps();
    odd[r] = _mm512_setzero_ps();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
    const uint8_t* block_values = values + b * kGroupBlockBytes;
    _mm_prefetch(reinterpret_cast<const char*>(block_values) + kPrefetchBytes, _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(block_values) + kPrefetchBytes + 512, _MM_HINT_T0);
#pragma GCC unroll 16
    for (int k = 0; k < 16; k += 2) {
      const __m512bh w_even = (__m512bh)_mm512_loadu_si512(block_values + k * 64);
      const __m512bh w_odd = (__m512bh)_mm512_loadu_si512(block_values + (k + 1) * 64);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const auto* pair = reinterpret_cast<const int8_t*>(x_rows[r] + b * 32 + 2 * k);
        even[r] = _mm512_dpbf16_ps(even[r], w_even, (__m512bh)BroadcastFour(pair));
        odd[r] = _mm512_dpbf16_ps(odd[r], w_odd, (__m512bh)BroadcastFour(pair + 4));
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    _mm512_storeu_ps(y + (first_x_row + r) * w.rows + group * kPackedRowsPerGroup,
                     _mm512_add_ps(even[r], odd[r]));
  }
}

template <GgmlType kType>
void LinearRowsPacked(const PackedWeightView& w, const PreparedActivations& x, int64_t row_begin,
                      int64_t row_end, float* y) {
  for (int64_t x_begin = 0; x_begin < x.m; x_begin += kXRowsPerBlock) {
    const int64_t x_end = std::min(x_begin + kXRowsPerBlock, x.m);
    for (int64_t group = row_begin / kPackedRowsPerGroup; group < row_end / kPackedRowsPerGroup;
         ++group) {
      int64_t i = x_begin;
      if constexpr (kType == GgmlType::kBF16) {
        for (; i + 8 <= x_end; i += 8) Bf16GroupTimesRows<8>(w, x, group, i, y);
        for (; i + 4 <= x_end; i += 4) Bf16GroupTimesRows<4>(w, x, group, i, y);
        for (; i < x_end; ++i) Bf16GroupTimesRows<1>(w, x, group, i, y);
      } else {
        for (; i + 8 <= x_end; i += 8) GroupTimesRows<kType, 8>(w, x, group, i, y);
        for (; i + 4 <= x_end; i += 4) GroupTimesRows<kType, 4>(w, x, group, i, y);
        for (; i < x_end; ++i) GroupTimesRows<kType, 1>(w, x, group, i, y);
      }
    }
  }
}

}  // namespace

void LinearRowsPackedQ8_0Avx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  LinearRowsPacked<GgmlType::kQ8_0>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedBf16Avx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  LinearRowsPacked<GgmlType::kBF16>(w, x, row_begin, row_end, y);
}

}  // namespace vllm::kernels
