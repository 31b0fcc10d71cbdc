// The AVX-512 kernels of packed F8_E4M3_B32 (packed_f8_layout.h). A step of 32 codes widens to 32
// bf16 values in 16-bit lanes: sign-extended and shifted left by 4, the exponent and mantissa bits
// land where bf16 keeps them, and adding 120 to the exponent (bias 7 → 127) gives every normal
// value; the 7 subnormals (exponent 0: m · 2^-9) come from a table; the sign is bit 15. Decode (m
// below kMinTiledRows) widens each step in registers as it streams the codes; prefill widens a
// pair of groups once into a thread-local tile of bf16 steps and runs every x row over it. Both run
// one micro-kernel over their source of steps, so a row's bits do not depend on m.
#include <immintrin.h>

#include <array>
#include <cstring>
#include <vector>

#include "kernels/cpu/flushed_subnormals.h"
#include "kernels/packed_f8_layout.h"

namespace vllm::kernels {
namespace {

// x rows from which a call widens its weights once into a tile (fewer widen each step per pass).
constexpr int64_t kMinTiledRows = 4;
constexpr int kTileRows = 6;  // x rows per prefill pass: 2 groups × 6 rows of sums and totals
constexpr int kGroupsSideBySide = 2;
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
    _mm_prefetch(record + kPrefetchBytes, _MM_HINT_T0);
    _mm_prefetch(record + kPrefetchBytes + 64 * 8, _MM_HINT_T0);
  }
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

// G groups of 16 W rows from `group` × R x rows from `first_x_row`: per block, each (group, x
// row)'s sum from zero over the 16 steps, then added to its total times the block's 16 scales.
template <typename Math, int R, int G, typename Steps>
void GroupsTimesRows(const PackedWeightView& w, const Steps& steps, const PreparedActivations& x,
                     int64_t group, int64_t first_x_row, float* y) {
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
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      const __m512 scales = _mm512_loadu_ps(reinterpret_cast<const float*>(
          records + (g * num_blocks + b) * kF8RecordBytes + kF8CodeBytesPerRecord));
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) totals[g][r] = _mm512_fmadd_ps(sums[g][r], scales, totals[g][r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    for (int g = 0; g < G; ++g) {
      _mm512_storeu_ps(y + (first_x_row + r) * w.rows + (group + g) * kF8RowsPerGroup,
                       totals[g][r]);
    }
  }
}

// x rows [0, m) over G groups from `group`, in passes of kTileRows, 4, 2 and 1 rows.
template <typename Math, int G, typename Steps>
void AllRows(const PackedWeightView& w, const Steps& steps, const PreparedActivations& x,
             int64_t group, float* y) {
  int64_t i = 0;
  for (; i + kTileRows <= x.m; i += kTileRows) {
    GroupsTimesRows<Math, kTileRows, G>(w, steps, x, group, i, y);
  }
  for (; i + 4 <= x.m; i += 4) GroupsTimesRows<Math, 4, G>(w, steps, x, group, i, y);
  for (; i + 2 <= x.m; i += 2) GroupsTimesRows<Math, 2, G>(w, steps, x, group, i, y);
  for (; i < x.m; ++i) GroupsTimesRows<Math, 1, G>(w, steps, x, group, i, y);
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
    // Decode: one group at a time (a second stream side by side leaves the prefetch behind).
    for (int64_t group = group_begin; group < group_end; ++group) {
      const CodeSteps steps{w.data + group * group_bytes, group_bytes, subnormals};
      AllRows<Math, 1>(w, steps, x, group, y);
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
    AllRows<Math, G>(w, TileSteps{tile.data(), num_blocks}, x, group, y);
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
