// The AVX-512 kernels for packed Q8_0, BF16 and F16 weights (packed_q8_layout.h). One vpdpbusd
// multiplies 4 consecutive columns of 16 W rows (one per lane) by the same 4 x values
// (broadcast), so a block of 32 columns is 8 vpdpbusd into one integer accumulator per x row,
// then one conversion and one fused multiply-add by d_w · d_x. The packed quants are unsigned
// (w + 128); the accumulator starts at -128 · Σ x_q of the block, which cancels the bias exactly
// (PrepareQ8_0Biases keeps these per block of x, so the start is a broadcast from memory).
// BF16 and F16 weights accumulate in f32 straight away (vdpbf16ps / converted f16 and vfmadd).
#include <immintrin.h>

#include <algorithm>
#include <any>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cpu/flushed_subnormals.h"
#include "kernels/packed_q8_layout.h"

namespace vllm::kernels {
namespace {

constexpr int64_t kXRowsPerBlock = 64;  // x rows that stay in L2 while W groups stream by
constexpr int64_t kPrefetchBytes = 2048;
// The integer tile: kQ8Groups groups of 16 W rows x kQ8Rows x rows (2 x 6: 12 accumulators).
constexpr int kQ8Groups = 2;
constexpr int kQ8Rows = 6;
// Q8_0 with m from kMinStreamedRows to kMaxStreamedRows (decode of several sequences) goes through
// StreamBlocksOverRows, kStreamRowsSideBySide rows at a time (4 x 2 groups: 8 chains of dots);
// fewer rows stream one group at a time, more run in GroupsTimesRows' tiles. Chosen by timing both
// on the TinyLlama shape (bench/HISTORY.md, 2026-11-28).
constexpr int64_t kMinStreamedRows = 8;
constexpr int64_t kMaxStreamedRows = 48;
constexpr int kStreamRowsSideBySide = 4;

inline __m512i BroadcastFour(const int8_t* bytes) {
  int32_t four;
  std::memcpy(&four, bytes, sizeof(four));
  return _mm512_set1_epi32(four);
}

// A packed Q8_0 weight's groups from `group` on: block b of group g is 8 steps of 64 bytes
// (Block), its 16 rows' scales fp16 (Scales).
class PackedQ8_0Groups {
 public:
  static constexpr int64_t kBlockBytes = PackedBytesPerGroupBlock(GgmlType::kQ8_0);
  PackedQ8_0Groups(const PackedWeightView& w, int64_t group)
      : num_blocks_(w.cols / 32),
        group_bytes_(num_blocks_ * kBlockBytes),
        quants_(w.data + group * group_bytes_),
        scales_(reinterpret_cast<const uint16_t*>(
                    w.data + PackedQuantBytes(GgmlType::kQ8_0, w.rows, w.cols)) +
                group * num_blocks_ * kPackedRowsPerGroup) {}
  int64_t num_blocks() const { return num_blocks_; }
  const uint8_t* Block(int g, int64_t b) const {
    return quants_ + g * group_bytes_ + b * kBlockBytes;
  }
  __m512 Scales(int g, int64_t b) const {
    return _mm512_cvtph_ps(_mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(scales_ + (g * num_blocks_ + b) * kPackedRowsPerGroup)));
  }

 private:
  int64_t num_blocks_;
  int64_t group_bytes_;
  const uint8_t* quants_;
  const uint16_t* scales_;
};

// y rows [first_x_row, + R), columns [16 group, + 16 G) = W groups [group, + G) · x rows. G
// groups side by side share each x broadcast, R x rows share each W load; every element's sum runs
// over the blocks in order, the same for every R and G.
template <int R, int G>
void GroupsTimesRows(const PackedWeightView& w, const PreparedActivations& x, int64_t group,
                     int64_t first_x_row, float* y) {
  const auto& biases = std::any_cast<const std::vector<int32_t>&>(x.packed_terms);
  const PackedQ8_0Groups groups(w, group);
  const int64_t num_blocks = groups.num_blocks();
  const BlockQ8_0* x_blocks[R];
  const float* x_scales[R];
  const int32_t* x_biases[R];
  __m512 acc[G][R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    x_blocks[r] = x.q8.data() + (first_x_row + r) * num_blocks;
    x_scales[r] = x.q8_scales.data() + (first_x_row + r) * num_blocks;
    x_biases[r] = biases.data() + (first_x_row + r) * num_blocks;
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) acc[g][r] = _mm512_setzero_ps();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
    __m512 w_scales[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      _mm_prefetch(reinterpret_cast<const char*>(groups.Block(g, b)) + kPrefetchBytes, _MM_HINT_T0);
      w_scales[g] = groups.Scales(g, b);
    }
    __m512i dots[G][R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) dots[g][r] = _mm512_set1_epi32(x_biases[r][b]);
    }
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      __m512i wq[G];
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) {
        wq[g] = _mm512_loadu_si512(groups.Block(g, b) + k * 64);
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m512i xq = BroadcastFour(x_blocks[r][b].qs + 4 * k);
#pragma GCC unroll 2
        for (int g = 0; g < G; ++g) dots[g][r] = _mm512_dpbusd_epi32(dots[g][r], wq[g], xq);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 x_scale = _mm512_set1_ps(x_scales[r][b]);
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) {
        acc[g][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dots[g][r]),
                                    _mm512_mul_ps(w_scales[g], x_scale), acc[g][r]);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      _mm512_storeu_ps(y + (first_x_row + r) * w.rows + (group + g) * kPackedRowsPerGroup,
                       acc[g][r]);
    }
  }
}

// Q8_0 for a few x rows (decode of several sequences): each block of G groups is loaded into
// registers once (its eight 64-byte steps per group, every line prefetched kPrefetchBytes ahead)
// and multiplied with every x row of [x_begin, x_end) before the next block, so that the weights
// stream from memory once and alongside the dots, instead of once per pass of GroupsTimesRows with
// the later passes waiting on L2. Each element's arithmetic is GroupsTimesRows's: the same integer
// dot per block, then the same f32 operations in block order.
template <int G>
void StreamBlocksOverRows(const PackedWeightView& w, const PreparedActivations& x, int64_t group,
                          int64_t x_begin, int64_t x_end, float* y) {
  const auto& biases = std::any_cast<const std::vector<int32_t>&>(x.packed_terms);
  const PackedQ8_0Groups groups(w, group);
  const int64_t num_blocks = groups.num_blocks();
  // The accumulators side by side ([x row][group][16 lanes]), not in y's rows, whose stride (a
  // multiple of 4 KiB for most shapes) would make every load alias the previous row's store.
  alignas(64) float acc[kMaxStreamedRows][G][kPackedRowsPerGroup] = {};
  for (int64_t b = 0; b < num_blocks; ++b) {
    __m512i wq[G][8];
    __m512 w_scales[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      const uint8_t* block = groups.Block(g, b);
      for (int64_t line = 0; line < PackedQ8_0Groups::kBlockBytes; line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(block) + kPrefetchBytes + line, _MM_HINT_T0);
      }
      w_scales[g] = groups.Scales(g, b);
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) wq[g][k] = _mm512_loadu_si512(block + k * 64);
    }
    auto rows = [&]<int R>(int64_t first) {
      __m512i dots[G][R];
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
        for (int g = 0; g < G; ++g) {
          dots[g][r] = _mm512_set1_epi32(biases[(x_begin + first + r) * num_blocks + b]);
        }
      }
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          const __m512i xq = BroadcastFour(x.q8[(x_begin + first + r) * num_blocks + b].qs + 4 * k);
#pragma GCC unroll 2
          for (int g = 0; g < G; ++g) dots[g][r] = _mm512_dpbusd_epi32(dots[g][r], wq[g][k], xq);
        }
      }
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const __m512 x_scale = _mm512_set1_ps(x.q8_scales[(x_begin + first + r) * num_blocks + b]);
#pragma GCC unroll 2
        for (int g = 0; g < G; ++g) {
          float* cell = acc[first + r][g];
          _mm512_store_ps(
              cell, _mm512_fmadd_ps(_mm512_cvtepi32_ps(dots[g][r]),
                                    _mm512_mul_ps(w_scales[g], x_scale), _mm512_load_ps(cell)));
        }
      }
    };
    int64_t i = 0;
    for (; i + kStreamRowsSideBySide <= x_end - x_begin; i += kStreamRowsSideBySide) {
      rows.template operator()<kStreamRowsSideBySide>(i);
    }
    for (; i < x_end - x_begin; ++i) rows.template operator()<1>(i);
  }
  for (int64_t i = 0; i < x_end - x_begin; ++i) {
    for (int g = 0; g < G; ++g) {
      _mm512_storeu_ps(y + (x_begin + i) * w.rows + (group + g) * kPackedRowsPerGroup,
                       _mm512_load_ps(acc[i][g]));
    }
  }
}

// One step of the float forms: the 16 W rows' values for one column (F16) or pair of columns
// (BF16) of a block, and the matching x values broadcast, into each accumulator.
struct Bf16Step {
  static constexpr GgmlType kType = GgmlType::kBF16;
  static constexpr int kColsPerStep = 2;
  using Weights = __m512bh;
  static const uint16_t* XRow(const PreparedActivations& x, int64_t row, int64_t cols) {
    return x.bf16.data() + row * cols;
  }
  static Weights Load(const uint8_t* step_values) {
    return (__m512bh)_mm512_loadu_si512(step_values);
  }
  static __m512 MulAdd(__m512 acc, Weights weights, const uint16_t* x_cols) {
    return _mm512_dpbf16_ps(acc, weights,
                            (__m512bh)BroadcastFour(reinterpret_cast<const int8_t*>(x_cols)));
  }
};
// BF16 on f32 fused multiply-adds, for CPUs whose vdpbf16ps multiplies at under the FMA rate
// (Bf16DotsOnFma()) and which have no AMX. A lane's pair of bf16 values (even column in the low
// half, odd in the high) gives both columns as f32 exactly (shift / mask), the product of two bf16
// values is exact in f32, and vdpbf16ps adds the odd column's product, then the even one's, each
// rounded to nearest with denormal inputs and results flushed to zero: the two FMAs in that order
// under FTZ and DAZ (set by the caller) give the same bits.
struct Bf16FmaStep {
  static constexpr GgmlType kType = GgmlType::kBF16;
  static constexpr int kColsPerStep = 2;
  struct Weights {
    __m512 even;
    __m512 odd;
  };
  static const float* XRow(const PreparedActivations& x, int64_t row, int64_t cols) {
    return x.bf16_as_f32.data() + row * cols;
  }
  static Weights Load(const uint8_t* step_values) {
    const __m512i pairs = _mm512_loadu_si512(step_values);
    return {_mm512_castsi512_ps(_mm512_slli_epi32(pairs, 16)),
            _mm512_castsi512_ps(_mm512_and_si512(pairs, _mm512_set1_epi32(~0xffff)))};
  }
  static __m512 MulAdd(__m512 acc, Weights weights, const float* x_cols) {
    acc = _mm512_fmadd_ps(weights.odd, _mm512_set1_ps(x_cols[1]), acc);
    return _mm512_fmadd_ps(weights.even, _mm512_set1_ps(x_cols[0]), acc);
  }
};
struct F16Step {
  static constexpr GgmlType kType = GgmlType::kF16;
  static constexpr int kColsPerStep = 1;
  using Weights = __m512;
  static const float* XRow(const PreparedActivations& x, int64_t row, int64_t cols) {
    return x.f32 + row * cols;
  }
  static Weights Load(const uint8_t* step_values) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(step_values)));
  }
  static __m512 MulAdd(__m512 acc, Weights weights, const float* x_cols) {
    return _mm512_fmadd_ps(weights, _mm512_set1_ps(*x_cols), acc);
  }
};

// The float forms (BF16: 16 vdpbf16ps per block, F16: 32 f32 fused multiply-adds) per x row and
// group into one accumulator, the same order for every R and G. G groups of 16 W rows side by side
// share each x broadcast, R x rows share each W load: a tile of 2 × 8 issues 10 loads per 16
// multiply-adds.
template <typename Step, int R, int G>
void FloatGroupsTimesRows(const PackedWeightView& w, const PreparedActivations& x, int64_t group,
                          int64_t first_x_row, float* y) {
  constexpr int64_t kGroupBlockBytes = PackedBytesPerGroupBlock(Step::kType);
  constexpr int kSteps = 32 / Step::kColsPerStep;
  constexpr int64_t kStepBytes = kGroupBlockBytes / kSteps;
  const int64_t num_blocks = w.cols / 32;
  const int64_t group_bytes = num_blocks * kGroupBlockBytes;
  const uint8_t* values = w.data + group * group_bytes;
  decltype(Step::XRow(x, 0, 0)) x_rows[R];
  __m512 acc[G][R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    x_rows[r] = Step::XRow(x, first_x_row + r, w.cols);
    for (int g = 0; g < G; ++g) acc[g][r] = _mm512_setzero_ps();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      const char* block_values =
          reinterpret_cast<const char*>(values + g * group_bytes + b * kGroupBlockBytes);
      _mm_prefetch(block_values + kPrefetchBytes, _MM_HINT_T0);
      _mm_prefetch(block_values + kPrefetchBytes + 512, _MM_HINT_T0);
    }
#pragma GCC unroll 32
    for (int k = 0; k < kSteps; ++k) {
      typename Step::Weights weights[G];
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) {
        weights[g] = Step::Load(values + g * group_bytes + b * kGroupBlockBytes + k * kStepBytes);
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const auto* x_cols = x_rows[r] + b * 32 + Step::kColsPerStep * k;
#pragma GCC unroll 2
        for (int g = 0; g < G; ++g) acc[g][r] = Step::MulAdd(acc[g][r], weights[g], x_cols);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    for (int g = 0; g < G; ++g) {
      _mm512_storeu_ps(y + (first_x_row + r) * w.rows + (group + g) * kPackedRowsPerGroup,
                       acc[g][r]);
    }
  }
}

// tile.template operator()<G>(group) over groups [group_begin, group_end) in tiles of G groups side
// by side: pairs, then a last odd group alone.
template <typename Tile>
void ForGroupTiles(int64_t group_begin, int64_t group_end, const Tile& tile) {
  int64_t group = group_begin;
  for (; group + kQ8Groups <= group_end; group += kQ8Groups) {
    tile.template operator()<kQ8Groups>(group);
  }
  if (group < group_end) tile.template operator()<1>(group);
}

// Float groups [group_begin, group_end) × x rows [x_begin, x_end): pairs of groups in passes of 8,
// then 4 x rows, a last odd group alone; single x rows (decode at batch 1) stream one group at a
// time, as the Q8_0 form does.
template <typename Step>
void FloatRows(const PackedWeightView& w, const PreparedActivations& x, int64_t group_begin,
               int64_t group_end, int64_t x_begin, int64_t x_end, float* y) {
  auto passes = [&]<int G>(int64_t group) {
    int64_t i = x_begin;
    for (; i + 8 <= x_end; i += 8) FloatGroupsTimesRows<Step, 8, G>(w, x, group, i, y);
    for (; i + 4 <= x_end; i += 4) FloatGroupsTimesRows<Step, 4, G>(w, x, group, i, y);
    for (; i < x_end; ++i) {
      for (int g = 0; g < G; ++g) FloatGroupsTimesRows<Step, 1, 1>(w, x, group + g, i, y);
    }
  };
  ForGroupTiles(group_begin, group_end, passes);
}

// Q8_0 groups [group_begin, group_end) (pairs side by side, a last odd one alone) × x rows
// [x_begin, x_end) in tiles of kQ8Rows x rows, then one tile of the rows left over (fewer than
// kQ8Rows).
void Q8_0Tiles(const PackedWeightView& w, const PreparedActivations& x, int64_t group_begin,
               int64_t group_end, int64_t x_begin, int64_t x_end, float* y) {
  auto passes = [&]<int G>(int64_t group) {
    int64_t i = x_begin;
    for (; i + kQ8Rows <= x_end; i += kQ8Rows) GroupsTimesRows<kQ8Rows, G>(w, x, group, i, y);
    static_assert(kQ8Rows == 6);
    switch (x_end - i) {
      case 5:
        return GroupsTimesRows<5, G>(w, x, group, i, y);
      case 4:
        return GroupsTimesRows<4, G>(w, x, group, i, y);
      case 3:
        return GroupsTimesRows<3, G>(w, x, group, i, y);
      case 2:
        return GroupsTimesRows<2, G>(w, x, group, i, y);
      case 1:
        return GroupsTimesRows<1, G>(w, x, group, i, y);
    }
  };
  ForGroupTiles(group_begin, group_end, passes);
}

// Q8_0 for every m. A few x rows (decode at small batches) go in one block: up to
// kMinStreamedRows as tiles of 6 and 4 x rows and single rows, up to kMaxStreamedRows streamed
// (StreamBlocksOverRows). More go in ceil(m / kXRowsPerBlock) blocks of whole tiles of kQ8Rows x
// rows, as even as they divide, the last block also taking the m % kQ8Rows rows left over: no
// block is a small remainder whose pass would read each W group from memory for a few rows.
void LinearRowsPackedQ8_0(const PackedWeightView& w, const PreparedActivations& x,
                          int64_t row_begin, int64_t row_end, float* y) {
  const int64_t group_begin = row_begin / kPackedRowsPerGroup;
  const int64_t group_end = row_end / kPackedRowsPerGroup;
  if (x.m < kMinStreamedRows) {
    auto passes = [&]<int G>(int64_t group) {
      int64_t i = 0;
      for (; i + kQ8Rows <= x.m; i += kQ8Rows) GroupsTimesRows<kQ8Rows, G>(w, x, group, i, y);
      for (; i + 4 <= x.m; i += 4) GroupsTimesRows<4, G>(w, x, group, i, y);
      // Single rows (decode at batch 1) stream one group at a time: two streams side by side
      // leave the weights' prefetch behind.
      for (; i < x.m; ++i) {
        for (int g = 0; g < G; ++g) GroupsTimesRows<1, 1>(w, x, group + g, i, y);
      }
    };
    ForGroupTiles(group_begin, group_end, passes);
    return;
  }
  if (x.m <= kMaxStreamedRows) {
    ForGroupTiles(group_begin, group_end,
                  [&]<int G>(int64_t group) { StreamBlocksOverRows<G>(w, x, group, 0, x.m, y); });
    return;
  }
  const int64_t num_tiles = x.m / kQ8Rows;
  const int64_t num_blocks = (x.m + kXRowsPerBlock - 1) / kXRowsPerBlock;
  for (int64_t block = 0; block < num_blocks; ++block) {
    const int64_t x_begin = num_tiles * block / num_blocks * kQ8Rows;
    const int64_t x_end =
        block + 1 == num_blocks ? x.m : num_tiles * (block + 1) / num_blocks * kQ8Rows;
    Q8_0Tiles(w, x, group_begin, group_end, x_begin, x_end, y);
  }
}

template <typename Step>
void LinearRowsPackedFloat(const PackedWeightView& w, const PreparedActivations& x,
                           int64_t row_begin, int64_t row_end, float* y) {
  for (int64_t x_begin = 0; x_begin < x.m; x_begin += kXRowsPerBlock) {
    FloatRows<Step>(w, x, row_begin / kPackedRowsPerGroup, row_end / kPackedRowsPerGroup, x_begin,
                    std::min(x_begin + kXRowsPerBlock, x.m), y);
  }
}

}  // namespace

void PrepareQ8_0Biases(PreparedActivations& x) {
  constexpr int32_t kBias = 128;
  std::vector<int32_t> biases(x.q8_sums.size());
  for (size_t b = 0; b < biases.size(); ++b) biases[b] = -kBias * x.q8_sums[b];
  x.packed_terms = std::move(biases);
}

void LinearRowsPackedQ8_0Avx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  LinearRowsPackedQ8_0(w, x, row_begin, row_end, y);
}

void LinearRowsPackedBf16Avx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  switch (Bf16WeightPath()) {
    case Bf16Path::kDots:
      LinearRowsPackedBf16DotAvx512(w, x, row_begin, row_end, y);
      break;
    case Bf16Path::kFmas:
      LinearRowsPackedBf16FmaAvx512(w, x, row_begin, row_end, y);
      break;
    case Bf16Path::kTiles:
      LinearRowsPackedBf16Amx(w, x, row_begin, row_end, y);
      break;
  }
}

void LinearRowsPackedBf16DotAvx512(const PackedWeightView& w, const PreparedActivations& x,
                                   int64_t row_begin, int64_t row_end, float* y) {
  LinearRowsPackedFloat<Bf16Step>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedBf16FmaAvx512(const PackedWeightView& w, const PreparedActivations& x,
                                   int64_t row_begin, int64_t row_end, float* y) {
  const FlushedSubnormals as_vdpbf16ps;
  LinearRowsPackedFloat<Bf16FmaStep>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedF16Avx512(const PackedWeightView& w, const PreparedActivations& x,
                               int64_t row_begin, int64_t row_end, float* y) {
  LinearRowsPackedFloat<F16Step>(w, x, row_begin, row_end, y);
}

}  // namespace vllm::kernels
