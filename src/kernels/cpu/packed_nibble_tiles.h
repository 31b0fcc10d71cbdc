// What the kernels of the nibble-packed types (packed_nibble_layout.h) share on every x86 ISA
// (cpu/packed_nibbles_avx512.h, cpu/packed_nibbles_avx2.h): x's per-chunk terms, prepared once per
// call, and the loop over tiles of 16 W rows × R x rows. Included by each kernel's ISA-flagged
// translation unit (internal linkage: each compiles its own copy with its own flags, and its terms
// are a type of its own in PreparedActivations::packed_terms).
#pragma once

#include <xmmintrin.h>

#include <algorithm>
#include <any>
#include <vector>

#include "kernels/packed_nibble_layout.h"

namespace vllm::kernels {
namespace {

constexpr int64_t kNibbleXRowsPerBlock = 64;    // x rows that stay in L2 while W groups stream by
constexpr int64_t kNibblePrefetchBytes = 4096;  // how far ahead of its chunk a tile prefetches

// Asks for the `bytes` bytes of a chunk's record part kNibblePrefetchBytes ahead (the weights
// stream from memory at small m; the hardware prefetcher alone falls behind).
inline void PrefetchAhead(const void* chunk_bytes, int64_t bytes) {
  const char* ahead = static_cast<const char*>(chunk_bytes) + kNibblePrefetchBytes;
  for (int64_t offset = 0; offset < bytes; offset += 64) {
    _mm_prefetch(ahead + offset, _MM_HINT_T0);
  }
}

// Chunks one Terms entry covers: Terms::kChunks where the type defines it (terms per super-block),
// else 1.
template <typename Terms>
constexpr int64_t ChunksPerTerms() {
  if constexpr (requires { Terms::kChunks; }) {
    return Terms::kChunks;
  } else {
    return 1;
  }
}

// x as a tile of R rows reads it: row r's Q8_0 blocks, and the type's Terms (d_x and sums or bias
// corrections, Terms::Of(x, index of the entry's first Q8_0 block)) per ChunksPerTerms<Terms>()
// chunks for a block of x rows, entry-major ([entry][x row of the block]): entry e's terms of the
// tile's R rows are terms[e * stride + r].
template <typename Terms, int R>
struct XTile {
  const BlockQ8_0* blocks[R];
  const Terms* terms;
  int64_t stride;

  // x rows [first_x_row, + R) of the block of `stride` x rows from x_begin, whose terms start at
  // block_terms.
  static XTile Of(const PreparedActivations& x, const Terms* block_terms, int64_t x_begin,
                  int64_t stride, int64_t first_x_row) {
    const int64_t chunks = x.cols / kQuantBlockSize;
    XTile tile{{}, block_terms + first_x_row - x_begin, stride};
    for (int r = 0; r < R; ++r) tile.blocks[r] = x.q8.data() + (first_x_row + r) * chunks;
    return tile;
  }
};

// K-quants with mins (Q4_K / Q5_K: kPairs 4; Q2_K: 8): a super-block's d_x and the Σ x_q of its
// 2 kPairs sub-blocks (Q4_K / Q5_K: its chunks; Q2_K: its chunks' halves, two per chunk) in pairs
// of 16-bit words (|Σ x_q| <= 32 · 128), sub-block 2j in the low word of sum_pairs[j], 2j + 1 in
// the high one.
template <int kPairs>
struct MinPairTerms {
  static constexpr int64_t kChunks = kChunksPerSuperBlock;
  float x_scale;
  int32_t sum_pairs[kPairs];
  static MinPairTerms Of(const PreparedActivations& x, int64_t first_block) {
    const int32_t* sub_block_sums = kPairs == kChunksPerSuperBlock / 2
                                        ? &x.q8_sums[first_block]
                                        : &x.q8_half_sums[2 * first_block];
    MinPairTerms terms{x.q8_scales[first_block], {}};
    for (int j = 0; j < kPairs; ++j) {
      const auto low = static_cast<uint16_t>(sub_block_sums[2 * j]);
      const auto high = static_cast<uint16_t>(sub_block_sums[2 * j + 1]);
      terms.sum_pairs[j] = static_cast<int32_t>(low | static_cast<uint32_t>(high) << 16);
    }
    return terms;
  }
};

// Q6_K / Q3_K: a chunk's d_x and the starts of its two integer dots, −kBias times the x half sums.
template <int32_t kBias>
struct BiasedHalfTerms {
  float x_scale;
  int32_t starts[2];
  static BiasedHalfTerms Of(const PreparedActivations& x, int64_t block) {
    return {x.q8_scales[block],
            {-kBias * x.q8_half_sums[2 * block], -kBias * x.q8_half_sums[2 * block + 1]}};
  }
};

constexpr int32_t kQ5_0Bias = 16;  // Q5_0's q is its value plus 16
constexpr int32_t kQ4_ZBias = 32;  // Q4_Z's code plus 32 − z is its value plus 32

// A chunk's d_x and the start of its integer dot, −kBias times the x sum.
template <int32_t kBias>
struct BiasedTerms {
  float x_scale;
  int32_t start;
  static BiasedTerms Of(const PreparedActivations& x, int64_t block) {
    return {x.q8_scales[block], -kBias * x.q8_sums[block]};
  }
};

// Q4_1 / Q5_1 (unbiased codes): a chunk's d_x, its integer dot's start (0) and d_x · Σ x_q, the
// factor of the mins.
struct MinTerms {
  float x_scale;
  int32_t start;
  float scaled_sum;
  static MinTerms Of(const PreparedActivations& x, int64_t block) {
    return {x.q8_scales[block], 0, x.q8_scales[block] * static_cast<float>(x.q8_sums[block])};
  }
};

// x's Terms for every x row (PackedKernels::prepare_terms), by blocks of kNibbleXRowsPerBlock x
// rows and entry-major inside a block: entry e of x row i of the block that starts at row b is
// element b · entries + e · (rows in the block) + i − b, so a tile's R rows read one run per entry.
template <typename Terms>
void PrepareNibbleTerms(PreparedActivations& x) {
  const int64_t chunks = x.cols / kQuantBlockSize;
  constexpr int64_t kEntryChunks = ChunksPerTerms<Terms>();
  const int64_t entries = chunks / kEntryChunks;
  std::vector<Terms> terms(entries * x.m);
  for (int64_t x_begin = 0; x_begin < x.m; x_begin += kNibbleXRowsPerBlock) {
    const int64_t x_end = std::min(x_begin + kNibbleXRowsPerBlock, x.m);
    Terms* block = terms.data() + x_begin * entries;
    for (int64_t entry = 0; entry < entries; ++entry) {
      for (int64_t i = x_begin; i < x_end; ++i) {
        block[entry * (x_end - x_begin) + i - x_begin] =
            Terms::Of(x, i * chunks + entry * kEntryChunks);
      }
    }
  }
  x.packed_terms = std::move(terms);
}

// y: [m, w.rows] for the groups of W rows [row_begin, row_end): tile.template operator()<R, G>(
// first group, first x row, XTile) per tile of G groups × R x rows, x's Terms as PrepareNibbleTerms
// built them. x rows go in blocks of 64 (staying in L2 while the groups stream by); each block in
// passes of kRows, then 4 rows over kGroups groups at a time, then a pair and a single row one
// group at a time; groups left over go one at a time. A tile's records stay in L1 between the
// passes. The tiling never changes an element's arithmetic.
template <typename Terms, int kGroups, int kRows, typename Tile>
void ForEachNibbleTile(const PreparedActivations& x, int64_t row_begin, int64_t row_end,
                       const Tile& tile) {
  const int64_t chunks = x.cols / kQuantBlockSize;
  const int64_t entries = chunks / ChunksPerTerms<Terms>();
  const auto& terms = std::any_cast<const std::vector<Terms>&>(x.packed_terms);
  for (int64_t x_begin = 0; x_begin < x.m; x_begin += kNibbleXRowsPerBlock) {
    const int64_t x_end = std::min(x_begin + kNibbleXRowsPerBlock, x.m);
    const int64_t stride = x_end - x_begin;
    const Terms* block_terms = terms.data() + x_begin * entries;
    auto passes = [&]<int R, int G>(int64_t group, int64_t& first_x_row) {
      for (; first_x_row + R <= x_end; first_x_row += R) {
        const auto xt = XTile<Terms, R>::Of(x, block_terms, x_begin, stride, first_x_row);
        tile.template operator()<R, G>(group, first_x_row, xt);
      }
    };
    auto tiles = [&]<int G>(int64_t group) {
      int64_t first_x_row = x_begin;
      passes.template operator()<kRows, G>(group, first_x_row);
      if constexpr (kRows > 4) passes.template operator()<4, G>(group, first_x_row);
      // Pairs and single rows (decode of a few sequences, experts routed a token or two) stream
      // one group at a time: two streams side by side leave the weights' prefetch behind. A pair
      // decodes each record once for both rows.
      for (int g = 0; g < G; ++g) {
        int64_t rest = first_x_row;
        passes.template operator()<2, 1>(group + g, rest);
        passes.template operator()<1, 1>(group + g, rest);
      }
    };
    const int64_t group_end = row_end / kNibbleRowsPerGroup;
    int64_t group = row_begin / kNibbleRowsPerGroup;
    for (; group + kGroups <= group_end; group += kGroups)
      tiles.template operator()<kGroups>(group);
    for (; group < group_end; ++group) tiles.template operator()<1>(group);
  }
}

}  // namespace
}  // namespace vllm::kernels
