// The AVX2 kernel of packed F8_E4M3_B32 (packed_f8_layout.h): the AVX-512 kernels' packing and
// bits, a group of 16 rows as two halves of 8. A half step's 16 codes widen to bf16 pairs as there
// (the subnormals from a vpshufb table), each pair to two f32 vectors (even and odd column), and
// two FMAs per x row stand for vdpbf16ps under FTZ and DAZ. Decode (m below kMinTiledRows) widens
// each step in registers; prefill widens a group once into a thread-local tile of bf16 pairs. Rows
// keeping one scale are one chain each, scaled once; others are scaled block by block.
#include <immintrin.h>

#include <array>
#include <vector>

#include "kernels/cpu/flushed_subnormals.h"
#include "kernels/packed_f8_layout.h"

namespace vllm::kernels {
namespace {

constexpr int64_t kMinTiledRows = 4;
constexpr int kHalves = 2;  // of 8 rows per group
// x rows per pass: rows keeping one scale 2 halves × 4 rows of sums; rows scaled block by block
// 2 halves × 2 rows of sums and totals.
constexpr int kOneScaleTileRows = 4;
constexpr int kBlockScaledTileRows = 2;
constexpr int64_t kHalfStepBytes = 16;  // codes of 8 lanes
constexpr int64_t kPrefetchBytes = 2048;

// The bf16 bits of the subnormal codes m = 0..7 as 16 bytes, in both 128-bit lanes (vpshufb).
__m256i SubnormalTable() {
  alignas(32) std::array<uint16_t, 16> table = {};
  for (int m = 0; m < 16; ++m) table[m] = F8E4m3ToBf16Bits(static_cast<uint8_t>(m % 8));
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(table.data()));
}

// 16 codes (8 lanes of 2) → 16 bf16 values, as the AVX-512 WidenStep.
inline __m256i WidenHalfStep(const uint8_t* codes, __m256i subnormals) {
  const __m256i code =
      _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes)));
  const __m256i shifted = _mm256_slli_epi16(code, 4);  // sign at bit 15, exponent at bits 10..7
  const __m256i normal = _mm256_add_epi16(_mm256_and_si256(shifted, _mm256_set1_epi16(0x07f0)),
                                          _mm256_set1_epi16(120 << 7));
  const __m256i subnormal = _mm256_cmpeq_epi16(_mm256_and_si256(shifted, _mm256_set1_epi16(0x0780)),
                                               _mm256_setzero_si256());
  // Word m of the table: bytes 2m (low) and 2m + 1 (high).
  const __m256i m = _mm256_and_si256(code, _mm256_set1_epi16(7));
  const __m256i byte_indices =
      _mm256_add_epi16(_mm256_mullo_epi16(m, _mm256_set1_epi16(0x0202)), _mm256_set1_epi16(0x0100));
  const __m256i magnitude =
      _mm256_blendv_epi8(normal, _mm256_shuffle_epi8(subnormals, byte_indices), subnormal);
  return _mm256_or_si256(magnitude,
                         _mm256_and_si256(shifted, _mm256_set1_epi16(static_cast<short>(0x8000))));
}

struct CodeSteps {
  const uint8_t* records;  // of the group
  __m256i subnormals;
  __m256i HalfStep(int h, int64_t b, int k) const {
    return WidenHalfStep(records + b * kF8RecordBytes + k * kF8StepBytes + h * kHalfStepBytes,
                         subnormals);
  }
  void Prefetch(int64_t b) const {
    const char* record = reinterpret_cast<const char*>(records + b * kF8RecordBytes);
    _mm_prefetch(record + kPrefetchBytes, _MM_HINT_T0);
    _mm_prefetch(record + kPrefetchBytes + 64 * 8, _MM_HINT_T0);
  }
};
// Half steps widened once into a tile: [block][step][half].
struct alignas(32) WidenedHalfStep {
  uint16_t values[16];
};
struct TileSteps {
  const WidenedHalfStep* tile;
  __m256i HalfStep(int h, int64_t b, int k) const {
    return _mm256_load_si256(
        reinterpret_cast<const __m256i*>(tile + (b * kF8StepsPerBlock + k) * kHalves + h));
  }
  void Prefetch(int64_t) const {}
};

// Where a pass writes y: the group's first column in x row 0, and the row stride.
struct Output {
  float* first;
  int64_t stride;
  float* At(int64_t x_row, int h) const { return first + x_row * stride + 8 * h; }
};

// Block b's scales of the group whose records start at `records`, rows [8 h, 8 h + 8).
inline __m256 HalfScales(const uint8_t* records, int64_t b, int h) {
  return _mm256_loadu_ps(
      reinterpret_cast<const float*>(records + b * kF8RecordBytes + kF8CodeBytesPerRecord) + 8 * h);
}

// The two f32 FMAs of a half step for one x row (vdpbf16ps under FTZ and DAZ: odd column, then
// even).
inline __m256 HalfStepMulAdd(__m256 acc, __m256i pairs, const float* x_cols) {
  const __m256 even = _mm256_castsi256_ps(_mm256_slli_epi32(pairs, 16));
  const __m256 odd = _mm256_castsi256_ps(_mm256_and_si256(pairs, _mm256_set1_epi32(~0xffff)));
  acc = _mm256_fmadd_ps(odd, _mm256_set1_ps(x_cols[1]), acc);
  return _mm256_fmadd_ps(even, _mm256_set1_ps(x_cols[0]), acc);
}

// sums[h][r] += block b's 16 half steps of half h times x row r: one chain per (half, x row).
template <int R, typename Steps>
[[gnu::always_inline]] inline void AddBlockHalfSteps(const Steps& steps, const float* (&x_rows)[R],
                                                     int64_t b, __m256 (&sums)[kHalves][R]) {
#pragma GCC unroll 16
  for (int k = 0; k < kF8StepsPerBlock; ++k) {
#pragma GCC unroll 2
    for (int h = 0; h < kHalves; ++h) {
      const __m256i pairs = steps.HalfStep(h, b, k);
      for (int r = 0; r < R; ++r) {
        sums[h][r] = HalfStepMulAdd(sums[h][r], pairs, x_rows[r] + b * kQuantBlockSize + 2 * k);
      }
    }
  }
}

// One group (rows keeping one scale) × R x rows from `first_x_row`, as the AVX-512
// OneScaleGroupsTimesRows.
template <int R, typename Steps>
void OneScaleGroupTimesRows(const PackedWeightView& w, const Steps& steps,
                            const PreparedActivations& x, int64_t group, int64_t first_x_row,
                            const Output& out) {
  const int64_t num_blocks = w.cols / kQuantBlockSize;
  const uint8_t* records = w.data + group * num_blocks * kF8RecordBytes;
  const float* x_rows[R];
  __m256 sums[kHalves][R];
  for (int r = 0; r < R; ++r) {
    x_rows[r] = x.bf16_as_f32.data() + (first_x_row + r) * x.cols;
    for (int h = 0; h < kHalves; ++h) sums[h][r] = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
    steps.Prefetch(b);
    AddBlockHalfSteps(steps, x_rows, b, sums);
  }
  for (int h = 0; h < kHalves; ++h) {
    const __m256 scales = HalfScales(records, 0, h);
    for (int r = 0; r < R; ++r) {
      _mm256_storeu_ps(out.At(first_x_row + r, h), _mm256_mul_ps(sums[h][r], scales));
    }
  }
}

// One group (scaled block by block) × R x rows from `first_x_row`, as the AVX-512
// BlockScaledGroupsTimesRows.
template <int R, typename Steps>
void BlockScaledGroupTimesRows(const PackedWeightView& w, const Steps& steps,
                               const PreparedActivations& x, int64_t group, int64_t first_x_row,
                               const Output& out) {
  const int64_t num_blocks = w.cols / kQuantBlockSize;
  const uint8_t* records = w.data + group * num_blocks * kF8RecordBytes;
  const float* x_rows[R];
  __m256 totals[kHalves][R];
  for (int r = 0; r < R; ++r) {
    x_rows[r] = x.bf16_as_f32.data() + (first_x_row + r) * x.cols;
    for (int h = 0; h < kHalves; ++h) totals[h][r] = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
    steps.Prefetch(b);
    __m256 sums[kHalves][R];
    for (int h = 0; h < kHalves; ++h) {
      for (int r = 0; r < R; ++r) sums[h][r] = _mm256_setzero_ps();
    }
    AddBlockHalfSteps(steps, x_rows, b, sums);
    for (int h = 0; h < kHalves; ++h) {
      const __m256 scales = HalfScales(records, b, h);
      for (int r = 0; r < R; ++r) totals[h][r] = _mm256_fmadd_ps(sums[h][r], scales, totals[h][r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int h = 0; h < kHalves; ++h) _mm256_storeu_ps(out.At(first_x_row + r, h), totals[h][r]);
  }
}

enum class Scaling { kOneScale, kPerBlock };

// x rows [0, m) over the group, in passes of the scaling's tile rows, then single rows.
template <Scaling S, typename Steps>
void AllRows(const PackedWeightView& w, const Steps& steps, const PreparedActivations& x,
             int64_t group, const Output& out) {
  int64_t i = 0;
  if constexpr (S == Scaling::kOneScale) {
    for (; i + kOneScaleTileRows <= x.m; i += kOneScaleTileRows) {
      OneScaleGroupTimesRows<kOneScaleTileRows>(w, steps, x, group, i, out);
    }
    for (; i < x.m; ++i) OneScaleGroupTimesRows<1>(w, steps, x, group, i, out);
  } else {
    for (; i + kBlockScaledTileRows <= x.m; i += kBlockScaledTileRows) {
      BlockScaledGroupTimesRows<kBlockScaledTileRows>(w, steps, x, group, i, out);
    }
    for (; i < x.m; ++i) BlockScaledGroupTimesRows<1>(w, steps, x, group, i, out);
  }
}

// The group over every x row, each row summed as its scales say (a group with rows of both kinds
// runs both and keeps each row's own), as the AVX-512 GroupsOverAllRows.
template <typename Steps>
void GroupOverAllRows(const PackedWeightView& w, const Steps& steps, const PreparedActivations& x,
                      int64_t group, float* y) {
  const uint32_t lanes = F8OneScaleLanes(w, group);
  const Output out{y + group * kF8RowsPerGroup, w.rows};
  if (lanes == kF8AllLanes) return AllRows<Scaling::kOneScale>(w, steps, x, group, out);
  AllRows<Scaling::kPerBlock>(w, steps, x, group, out);
  if (lanes == 0) return;
  std::vector<float> one_scale_y(x.m * kF8RowsPerGroup);
  AllRows<Scaling::kOneScale>(w, steps, x, group, Output{one_scale_y.data(), kF8RowsPerGroup});
  for (int64_t i = 0; i < x.m; ++i) {
    for (int lane = 0; lane < kF8RowsPerGroup; ++lane) {
      if (lanes >> lane & 1) *(out.At(i, 0) + lane) = one_scale_y[i * kF8RowsPerGroup + lane];
    }
  }
}

}  // namespace

void LinearRowsPackedF8Avx2(const PackedWeightView& w, const PreparedActivations& x,
                            int64_t row_begin, int64_t row_end, float* y) {
  const FlushedSubnormals as_vdpbf16ps;
  const int64_t num_blocks = w.cols / kQuantBlockSize;
  const __m256i subnormals = SubnormalTable();
  thread_local std::vector<WidenedHalfStep> tile;
  if (x.m >= kMinTiledRows) tile.resize(num_blocks * kF8StepsPerBlock * kHalves);
  for (int64_t group = row_begin / kF8RowsPerGroup; group < row_end / kF8RowsPerGroup; ++group) {
    const CodeSteps codes{w.data + group * num_blocks * kF8RecordBytes, subnormals};
    if (x.m < kMinTiledRows) {
      GroupOverAllRows(w, codes, x, group, y);
      continue;
    }
    for (int64_t b = 0; b < num_blocks; ++b) {
      for (int k = 0; k < kF8StepsPerBlock; ++k) {
        for (int h = 0; h < kHalves; ++h) {
          _mm256_store_si256(
              reinterpret_cast<__m256i*>(tile.data() + (b * kF8StepsPerBlock + k) * kHalves + h),
              codes.HalfStep(h, b, k));
        }
      }
    }
    GroupOverAllRows(w, TileSteps{tile.data()}, x, group, y);
  }
}

}  // namespace vllm::kernels
