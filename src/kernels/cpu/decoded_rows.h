// The in-place kernel for every integer weight type, written once for every SIMD ISA: each
// includes it in its own ISA-flagged translation unit with its Chunk (decoded_rows_avx2.h: AVX2
// and AVX-512; decoded_rows_neon.h: NEON and dotprod); everything here has internal linkage.
//
// A W row's blocks are decoded once per block of x rows (DecodedBlock: int8 q, per sub-block f32
// scale and min), then each 32-value chunk meets every x row of the block:
//   sum  += d_x · Σ_s scale[s] · Σ_s q·x_q      (in the ISA's Chunk::Sum)
//   mins += d_x · Σ_s min[s] · Σ_s x_q
// over the chunk's sub-blocks s, and y = Chunk::Total(sum) − mins. The order depends only on cols,
// never on m or the row range. Chunk(decoded, c, half_sub_blocks) holds chunk c's weights and
// scales; chunk.Add(x's chunk values, d_x, its two half sums, dot, sum, mins) adds one x row's
// terms, `dot` being the ISA's exact integer dot of weight and x bytes.
#pragma once

#include <algorithm>

#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

constexpr int64_t kDecodedXRowsPerBlock = 64;

// kHalfSubBlocks: the type's sub-blocks are 16 values (two per chunk), else 32.
template <typename Chunk, bool kHalfSubBlocks, typename Dot>
void DecodedRowsOf(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                   int64_t row_end, float* y, const Dot& dot) {
  const TypeTraits& traits = *w.traits;
  const int64_t block_size = traits.layout.block_size;
  const int64_t chunks_per_block = block_size / kQuantBlockSize;
  const int64_t num_blocks = w.cols / block_size;
  const int64_t x_blocks_per_row = w.cols / kQuantBlockSize;
  DecodedBlock decoded;
  typename Chunk::Sum sums[kDecodedXRowsPerBlock];
  float mins[kDecodedXRowsPerBlock];
  for (int64_t x_begin = 0; x_begin < x.m; x_begin += kDecodedXRowsPerBlock) {
    const int64_t x_count = std::min(kDecodedXRowsPerBlock, x.m - x_begin);
    for (int64_t j = row_begin; j < row_end; ++j) {
      const uint8_t* row = w.data + j * w.row_bytes;
      std::fill_n(sums, x_count, Chunk::Zero());
      std::fill_n(mins, x_count, 0.0f);
      for (int64_t b = 0; b < num_blocks; ++b) {
        traits.decode(row + b * traits.layout.block_bytes, &decoded);
        for (int64_t c = 0; c < chunks_per_block; ++c) {
          const Chunk chunk(decoded, c, kHalfSubBlocks);
          const int64_t xb = b * chunks_per_block + c;
          for (int64_t i = 0; i < x_count; ++i) {
            const int64_t x_block = (x_begin + i) * x_blocks_per_row + xb;
            chunk.Add(x.q8[x_block].qs, x.q8_scales[x_block], &x.q8_half_sums[x_block * 2], dot,
                      sums[i], mins[i]);
          }
        }
      }
      for (int64_t i = 0; i < x_count; ++i) {
        y[(x_begin + i) * w.rows + j] = Chunk::Total(sums[i]) - mins[i];
      }
    }
  }
}

// One instance per sub-block size, so that the chunks' branches on it fold away.
template <typename Chunk, typename Dot>
void DecodedRows(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                 int64_t row_end, float* y, const Dot& dot) {
  if (w.traits->sub_block_size == 16) {
    DecodedRowsOf<Chunk, true>(w, x, row_begin, row_end, y, dot);
  } else {
    DecodedRowsOf<Chunk, false>(w, x, row_begin, row_end, y, dot);
  }
}

}  // namespace
}  // namespace vllm::kernels
