// The AVX-512 kernels of packed F8_E4M3_B32 (packed_f8_layout.h). A step of 32 codes widens to 32
// bf16 values in 16-bit lanes: sign-extended and shifted left by 4, the exponent and mantissa bits
// land where bf16 keeps them, and adding 120 to the exponent (bias 7 → 127) gives every normal
// value; the 7 subnormals (exponent 0: m · 2^-9) come from a table; the sign is bit 15. Decode (m
// below kMinTiledRows) widens each step in registers as it streams the codes; prefill widens a
// pair of groups once into a thread-local tile of bf16 steps and runs every x row over it. Both run
// one micro-kernel over their source of steps, so a row's bits do not depend on m. Groups whose
// rows keep one scale run BF16's micro-kernel (a chain per output, 2 × 8 tiles) and scale once;
// the others sum each block from zero and add it times its scales (2 × 6 tiles of sums and
// totals); a group with rows of both kinds runs both (rare: a checkpoint's scales decide it).
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "kernels/cpu/flushed_subnormals.h"
#include "kernels/packed_f8_layout.h"

namespace vllm::kernels {
namespace {

// x rows from which a call widens its weights once into a tile (fewer widen each step per pass).
constexpr int64_t kMinTiledRows = 4;
// x rows per prefill pass over 2 groups: rows keeping one scale need a sum per (group, x row), 2 ×
// 8 as BF16's kernel; rows scaled block by block a block sum and a total, 2 × 6.
constexpr int kOneScaleTileRows = 8;
constexpr int kBlockScaledTileRows = 6;
constexpr int kGroupsSideBySide = 2;
constexpr int kDecodeOneScaleGroups = 3;
constexpr int64_t kPrefetchBytes = 2048;

// The bf16 bits of the subnormal codes m = 0..7 (the rest unused), indexed by a code's low bits.
__m512i SubnormalTable() {
  alignas(64) std::array<uint16_t, 32> table = {};
  for (int m = 0; m < 8; ++m) table[m] = F8E4m3ToBf16Bits(static_cast<uint8_t>(m));
  return _mm512_load_si512(table.data());
}

inline __m512i WidenStep(const uint8_t* codes, __m512i subnormals) {
  const __m512i code =
      _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes)));
  const __m512i shifted = _mm512_slli_epi16(code, 4);  // sign at bit 15, exponent at bits 10..7
  const __m512i normal = _mm512_add_epi16(_mm512_and_si512(shifted, _mm512_set1_epi16(0x07f0)),
                                          _mm512_set1_epi16(120 << 7));
  const __mmask32 subnormal = _mm512_testn_epi16_mask(shifted, _mm512_set1_epi16(0x0780));
  const __m512i magnitude = _mm512_mask_permutexvar_epi16(normal, subnormal, code, subnormals);
  // magnitude | (shifted & sign)
  return _mm512_ternarylogic_epi32(magnitude, shifted,
                                   _mm512_set1_epi16(static_cast<short>(0x8000)), 0xf8);
}

// Steps widened as the codes stream by (decode).
struct CodeSteps {
  const uint8_t* records;  // of the first group
  int64_t group_bytes;
  __m512i subnormals;
  __m512i Step(int g, int64_t b, int k) const {
    return WidenStep(records + g * group_bytes + b * kF8RecordBytes + k * kF8StepBytes, subnormals);
  }
  void Prefetch(int g, int64_t b) const {
    const char* record =
        reinterpret_cast<const char*>(records + g * group_bytes + b * kF8RecordBytes);
    for (int64_t line = 0; line < kF8RecordBytes; line += 64) {
      _mm_prefetch(record + kPrefetchBytes + line, _MM_HINT_T0);
    }
  }
  CodeSteps Group(int g) const { return {records + g * group_bytes, group_bytes, subnormals}; }
};
// One widened step: 16 lanes of 2 bf16 values.
struct alignas(64) WidenedStep {
  uint16_t values[32];
};
// Steps widened once into a tile (prefill): [group][block][step].
struct TileSteps {
  const WidenedStep* tile;
  int64_t num_blocks;
  __m512i Step(int g, int64_t b, int k) const {
    return _mm512_load_si512(tile + (g * num_blocks + b) * kF8StepsPerBlock + k);
  }
  void Prefetch(int, int64_t) const {}
  TileSteps Group(int g) const { return {tile + g * num_blocks * kF8StepsPerBlock, num_blocks}; }
};

// One step's multiply-adds: vdpbf16ps on x's bf16 bits, or the two f32 FMAs it stands for (odd
// column, then even) on x's bf16 values, the same bits under FTZ and DAZ.
struct DotMath {
  using Weights = __m512bh;
  static const uint16_t* XRow(const PreparedActivations& x, int64_t row) {
    return x.bf16.data() + row * x.cols;
  }
  static Weights Load(__m512i pairs) { return (__m512bh)pairs; }
  static __m512 MulAdd(__m512 acc, Weights weights, const uint16_t* x_cols) {
    int32_t two;
    std::memcpy(&two, x_cols, sizeof(two));
    return _mm512_dpbf16_ps(acc, weights, (__m512bh)_mm512_set1_epi32(two));
  }
};
struct FmaMath {
  struct Weights {
    __m512 even;
    __m512 odd;
  };
  static const float* XRow(const PreparedActivations& x, int64_t row) {
    return x.bf16_as_f32.data() + row * x.cols;
  }
  static Weights Load(__m512i pairs) {
    return {_mm512_castsi512_ps(_mm512_slli_epi32(pairs, 16)),
            _mm512_castsi512_ps(_mm512_and_si512(pairs, _mm512_set1_epi32(~0xffff)))};
  }
  static __m512 MulAdd(__m512 acc, Weights weights, const float* x_cols) {
    acc = _mm512_fmadd_ps(weights.odd, _mm512_set1_ps(x_cols[1]), acc);
    return _mm512_fmadd_ps(weights.even, _mm512_set1_ps(x_cols[0]), acc);
  }
};

// Where a pass writes y: the first group's first column in x row 0, and the row stride.
struct Output {
  float* first;
  int64_t stride;
  float* At(int64_t x_row, int g) const { return first + x_row * stride + g * kF8RowsPerGroup; }
};

// Block b's 16 scales of the group whose records start at `records`.
inline __m512 BlockScales(const uint8_t* records, int64_t b) {
  return _mm512_loadu_ps(
      reinterpret_cast<const float*>(records + b * kF8RecordBytes + kF8CodeBytesPerRecord));
}

// sums[g][r] += block b's 16 steps of group g times x row r: one chain per (group, x row).
template <typename Math, int R, int G, typename Steps, typename XRow>
[[gnu::always_inline]] inline void AddBlockSteps(const Steps& steps, const XRow (&x_rows)[R],
                                                 int64_t b, __m512 (&sums)[G][R]) {
#pragma GCC unroll 16
  for (int k = 0; k < kF8StepsPerBlock; ++k) {
    typename Math::Weights weights[G];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) weights[g] = Math::Load(steps.Step(g, b, k));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const auto* x_cols = x_rows[r] + b * kQuantBlockSize + 2 * k;
#pragma GCC unroll 2
      for (int g = 0; g < G; ++g) sums[g][r] = Math::MulAdd(sums[g][r], weights[g], x_cols);
    }
  }
}

// G groups of 16 W rows from `group` (rows keeping one scale) × R x rows from `first_x_row`: each
// (group, x row)'s sum from zero over every step, times the rows' scales once at the end.
template <typename Math, int R, int G, typename Steps>
void OneScaleGroupsTimesRows(const PackedWeightView& w, const Steps& steps,
                             const PreparedActivations& x, int64_t group, int64_t first_x_row,
                             const Output& out) {
  const int64_t num_blocks = w.cols / kQuantBlockSize;
  const uint8_t* records = w.data + group * num_blocks * kF8RecordBytes;
  decltype(Math::XRow(x, 0)) x_rows[R];
  __m512 sums[G][R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    x_rows[r] = Math::XRow(x, first_x_row + r);
    for (int g = 0; g < G; ++g) sums[g][r] = _mm512_setzero_ps();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) steps.Prefetch(g, b);
    AddBlockSteps<Math>(steps, x_rows, b, sums);
  }
#pragma GCC unroll 2
  for (int g = 0; g < G; ++g) {
    const __m512 scales = BlockScales(records + g * num_blocks * kF8RecordBytes, 0);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      _mm512_storeu_ps(out.At(first_x_row + r, g), _mm512_mul_ps(sums[g][r], scales));
    }
  }
}

// G groups of 16 W rows from `group` (scaled block by block) × R x rows from `first_x_row`: per
// block, each (group, x row)'s sum from zero over the 16 steps, then added to its total times the
// block's 16 scales.
template <typename Math, int R, int G, typename Steps>
void BlockScaledGroupsTimesRows(const PackedWeightView& w, const Steps& steps,
                                const PreparedActivations& x, int64_t group, int64_t first_x_row,
                                const Output& out) {
  const int64_t num_blocks = w.cols / kQuantBlockSize;
  const uint8_t* records = w.data + group * num_blocks * kF8RecordBytes;
  decltype(Math::XRow(x, 0)) x_rows[R];
  __m512 totals[G][R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    x_rows[r] = Math::XRow(x, first_x_row + r);
    for (int g = 0; g < G; ++g) totals[g][r] = _mm512_setzero_ps();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
    __m512 sums[G][R];
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      steps.Prefetch(g, b);
      for (int r = 0; r < R; ++r) sums[g][r] = _mm512_setzero_ps();
    }
    AddBlockSteps<Math>(steps, x_rows, b, sums);
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      const __m512 scales = BlockScales(records + g * num_blocks * kF8RecordBytes, b);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) totals[g][r] = _mm512_fmadd_ps(sums[g][r], scales, totals[g][r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    for (int g = 0; g < G; ++g) _mm512_storeu_ps(out.At(first_x_row + r, g), totals[g][r]);
  }
}

enum class Scaling { kOneScale, kPerBlock };

// x rows [0, m) over G groups from `group`, in passes of the scaling's tile rows (at most
// kMaxRows), 4, 2 and 1 rows.
template <typename Math, Scaling S, int G, int kMaxRows, typename Steps>
void AllRows(const PackedWeightView& w, const Steps& steps, const PreparedActivations& x,
             int64_t group, const Output& out) {
  auto pass = [&]<int R>(int64_t first_x_row) {
    if constexpr (S == Scaling::kOneScale) {
      OneScaleGroupsTimesRows<Math, R, G>(w, steps, x, group, first_x_row, out);
    } else {
      BlockScaledGroupsTimesRows<Math, R, G>(w, steps, x, group, first_x_row, out);
    }
  };
  constexpr int kTileRows =
      std::min(kMaxRows, S == Scaling::kOneScale ? kOneScaleTileRows : kBlockScaledTileRows);
  int64_t i = 0;
  if constexpr (kTileRows > 4) {
    for (; i + kTileRows <= x.m; i += kTileRows) pass.template operator()<kTileRows>(i);
  }
  if constexpr (kTileRows >= 4) {
    for (; i + 4 <= x.m; i += 4) pass.template operator()<4>(i);
  }
  for (; i + 2 <= x.m; i += 2) pass.template operator()<2>(i);
  for (; i < x.m; ++i) pass.template operator()<1>(i);
}

// G groups from `group` over every x row, each row summed as its scales say: side by side where
// the groups' rows all keep one scale or none does; otherwise group by group, a group with rows of
// both kinds running both and keeping each row's own.
template <typename Math, int G, int kMaxRows, typename Steps>
void GroupsOverAllRows(const PackedWeightView& w, const Steps& steps, const PreparedActivations& x,
                       int64_t group, float* y) {
  bool all_one_scale = true;
  bool none_one_scale = true;
  for (int g = 0; g < G; ++g) {
    const uint32_t lanes = F8OneScaleLanes(w, group + g);
    all_one_scale = all_one_scale && lanes == kF8AllLanes;
    none_one_scale = none_one_scale && lanes == 0;
  }
  const Output out{y + group * kF8RowsPerGroup, w.rows};
  if (all_one_scale) {
    return AllRows<Math, Scaling::kOneScale, G, kMaxRows>(w, steps, x, group, out);
  }
  if (none_one_scale) {
    return AllRows<Math, Scaling::kPerBlock, G, kMaxRows>(w, steps, x, group, out);
  }
  if constexpr (G > 1) {
    for (int g = 0; g < G; ++g) {
      GroupsOverAllRows<Math, 1, kMaxRows>(w, steps.Group(g), x, group + g, y);
    }
  } else {
    AllRows<Math, Scaling::kPerBlock, 1, kMaxRows>(w, steps, x, group, out);
    std::vector<float> one_scale_y(x.m * kF8RowsPerGroup);
    AllRows<Math, Scaling::kOneScale, 1, kMaxRows>(w, steps, x, group,
                                                   Output{one_scale_y.data(), kF8RowsPerGroup});
    const uint32_t lanes = F8OneScaleLanes(w, group);
    for (int64_t i = 0; i < x.m; ++i) {
      for (int lane = 0; lane < kF8RowsPerGroup; ++lane) {
        if (lanes >> lane & 1) *(out.At(i, 0) + lane) = one_scale_y[i * kF8RowsPerGroup + lane];
      }
    }
  }
}

template <typename Math>
void LinearRowsPackedF8(const PackedWeightView& w, const PreparedActivations& x, int64_t row_begin,
                        int64_t row_end, float* y) {
  const int64_t num_blocks = w.cols / kQuantBlockSize;
  const int64_t group_bytes = num_blocks * kF8RecordBytes;
  const int64_t group_begin = row_begin / kF8RowsPerGroup;
  const int64_t group_end = row_end / kF8RowsPerGroup;
  const __m512i subnormals = SubnormalTable();
  if (x.m < kMinTiledRows) {
    // Decode: groups whose rows keep one scale kDecodeOneScaleGroups side by side (each lane's
    // sum is one chain: several hide vdpbf16ps's latency), others one at a time (their blocks'
    // sums are independent, and a second stream side by side leaves the prefetch behind).
    auto one_scale = [&](int64_t first, int64_t end) {
      for (int64_t group = first; group < end; ++group) {
        if (F8OneScaleLanes(w, group) != kF8AllLanes) return false;
      }
      return true;
    };
    for (int64_t group = group_begin; group < group_end;) {
      const CodeSteps steps{w.data + group * group_bytes, group_bytes, subnormals};
      if (group + kDecodeOneScaleGroups <= group_end &&
          one_scale(group, group + kDecodeOneScaleGroups)) {
        AllRows<Math, Scaling::kOneScale, kDecodeOneScaleGroups, kMinTiledRows - 1>(
            w, steps, x, group, Output{y + group * kF8RowsPerGroup, w.rows});
        group += kDecodeOneScaleGroups;
      } else {
        GroupsOverAllRows<Math, 1, kMinTiledRows - 1>(w, steps, x, group, y);
        ++group;
      }
    }
    return;
  }
  thread_local std::vector<WidenedStep> tile;
  tile.resize(kGroupsSideBySide * num_blocks * kF8StepsPerBlock);
  auto widen_and_run = [&]<int G>(int64_t group) {
    const CodeSteps codes{w.data + group * group_bytes, group_bytes, subnormals};
    for (int g = 0; g < G; ++g) {
      for (int64_t b = 0; b < num_blocks; ++b) {
        for (int k = 0; k < kF8StepsPerBlock; ++k) {
          _mm512_store_si512(tile.data() + (g * num_blocks + b) * kF8StepsPerBlock + k,
                             codes.Step(g, b, k));
        }
      }
    }
    GroupsOverAllRows<Math, G, kOneScaleTileRows>(w, TileSteps{tile.data(), num_blocks}, x, group,
                                                  y);
  };
  int64_t group = group_begin;
  for (; group + kGroupsSideBySide <= group_end; group += kGroupsSideBySide) {
    widen_and_run.template operator()<kGroupsSideBySide>(group);
  }
  if (group < group_end) widen_and_run.template operator()<1>(group);
}

}  // namespace

void LinearRowsPackedF8Avx512(const PackedWeightView& w, const PreparedActivations& x,
                              int64_t row_begin, int64_t row_end, float* y) {
  // x.bf16_as_f32 exists where BF16 weights take the FMA path (quantize.cc); the tiles' path
  // (AMX) has x.bf16, which the dot kernel reads.
  if (Bf16WeightPath() == Bf16Path::kFmas) {
    LinearRowsPackedF8FmaAvx512(w, x, row_begin, row_end, y);
  } else {
    LinearRowsPackedF8DotAvx512(w, x, row_begin, row_end, y);
  }
}

void LinearRowsPackedF8DotAvx512(const PackedWeightView& w, const PreparedActivations& x,
                                 int64_t row_begin, int64_t row_end, float* y) {
  const FlushedSubnormals as_vdpbf16ps;
  LinearRowsPackedF8<DotMath>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedF8FmaAvx512(const PackedWeightView& w, const PreparedActivations& x,
                                 int64_t row_begin, int64_t row_end, float* y) {
  const FlushedSubnormals as_vdpbf16ps;
  LinearRowsPackedF8<FmaMath>(w, x, row_begin, row_end, y);
}

}  // namespace vllm::kernels
