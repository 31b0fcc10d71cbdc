// The AVX2 kernels of packed BF16 and F16 weights (packed_q8_layout.h), on the AVX-512 kernels'
// packing (cpu/linear_packed_avx512.cc) with their arithmetic in their order, so the same bits. A
// group of 16 W rows is read as two halves of 8 (BF16: bytes [32 h, 32 h + 32) of each 64-byte
// step, a pair of columns per lane; F16: bytes [16 h, 16 h + 16) of each 32-byte step, one column
// per lane), widened to f32 and multiplied by x's broadcast values with FMAs: BF16 as the AVX-512
// FMA kernel (odd column, then even, under FTZ and DAZ: vdpbf16ps's bits), F16 one column at a
// time. Tiles of one group × R x rows, each element's sum over the columns in order for every R.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/flushed_subnormals.h"
#include "kernels/packed_q8_layout.h"

namespace vllm::kernels {
namespace {

constexpr int kHalves = 2;                // of 8 rows (lanes) per group of 16
constexpr int64_t kXRowsPerBlock = 64;    // x rows that stay in L2 while W groups stream by
constexpr int64_t kPrefetchBytes = 2048;  // how far ahead of its block a tile prefetches
constexpr int kMaxTileRows = 4;           // x rows per tile: 8 accumulators of 16 ymm

// BF16: a lane's pair of bf16 values (even column low, odd high) as two f32 vectors, exactly.
struct Bf16HalfStep {
  static constexpr GgmlType kType = GgmlType::kBF16;
  static constexpr int kColsPerStep = 2;
  struct Weights {
    __m256 even;
    __m256 odd;
  };
  static const float* XRow(const PreparedActivations& x, int64_t row) {
    return x.bf16_as_f32.data() + row * x.cols;
  }
  static Weights Load(const uint8_t* step_values, int half) {
    const __m256i pairs =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(step_values + 32 * half));
    return {_mm256_castsi256_ps(_mm256_slli_epi32(pairs, 16)),
            _mm256_castsi256_ps(_mm256_and_si256(pairs, _mm256_set1_epi32(~0xffff)))};
  }
  static __m256 MulAdd(__m256 acc, const Weights& weights, const float* x_cols) {
    acc = _mm256_fmadd_ps(weights.odd, _mm256_set1_ps(x_cols[1]), acc);
    return _mm256_fmadd_ps(weights.even, _mm256_set1_ps(x_cols[0]), acc);
  }
};
struct F16HalfStep {
  static constexpr GgmlType kType = GgmlType::kF16;
  static constexpr int kColsPerStep = 1;
  using Weights = __m256;
  static const float* XRow(const PreparedActivations& x, int64_t row) {
    return x.f32 + row * x.cols;
  }
  static Weights Load(const uint8_t* step_values, int half) {
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(step_values + 16 * half)));
  }
  static __m256 MulAdd(__m256 acc, Weights weights, const float* x_cols) {
    return _mm256_fmadd_ps(weights, _mm256_set1_ps(*x_cols), acc);
  }
};

// y rows [first_x_row, + R), columns [16 group, + 16) = W group `group` · those x rows.
template <typename Step, int R>
void GroupTile(const PackedWeightView& w, const PreparedActivations& x, int64_t group,
               int64_t first_x_row, float* y) {
  constexpr int64_t kBlockBytes = PackedBytesPerGroupBlock(Step::kType);
  constexpr int kSteps = kQuantBlockSize / Step::kColsPerStep;
  constexpr int64_t kStepBytes = kBlockBytes / kSteps;
  const int64_t num_blocks = w.cols / kQuantBlockSize;
  const uint8_t* values = w.data + group * num_blocks * kBlockBytes;
  const float* x_rows[R];
  __m256 acc[kHalves][R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    x_rows[r] = Step::XRow(x, first_x_row + r);
    for (int half = 0; half < kHalves; ++half) acc[half][r] = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
    const uint8_t* block = values + b * kBlockBytes;
    for (int64_t line = 0; line < kBlockBytes; line += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(block) + kPrefetchBytes + line, _MM_HINT_T0);
    }
#pragma GCC unroll 32
    for (int k = 0; k < kSteps; ++k) {
      typename Step::Weights weights[kHalves];
      for (int half = 0; half < kHalves; ++half) {
        weights[half] = Step::Load(block + k * kStepBytes, half);
      }
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const float* x_cols = x_rows[r] + b * kQuantBlockSize + Step::kColsPerStep * k;
        for (int half = 0; half < kHalves; ++half) {
          acc[half][r] = Step::MulAdd(acc[half][r], weights[half], x_cols);
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    for (int half = 0; half < kHalves; ++half) {
      _mm256_storeu_ps(y + (first_x_row + r) * w.rows + group * kPackedRowsPerGroup + half * 8,
                       acc[half][r]);
    }
  }
}

// Groups of rows [row_begin, row_end) × x rows in blocks of kXRowsPerBlock, each group over its
// block in tiles of kMaxTileRows x rows, then 2 and 1 (decode at batch 1: one group at a time).
template <typename Step>
void FloatRows(const PackedWeightView& w, const PreparedActivations& x, int64_t row_begin,
               int64_t row_end, float* y) {
  for (int64_t x_begin = 0; x_begin < x.m; x_begin += kXRowsPerBlock) {
    const int64_t x_end = std::min(x_begin + kXRowsPerBlock, x.m);
    for (int64_t group = row_begin / kPackedRowsPerGroup; group < row_end / kPackedRowsPerGroup;
         ++group) {
      int64_t i = x_begin;
      for (; i + kMaxTileRows <= x_end; i += kMaxTileRows) {
        GroupTile<Step, kMaxTileRows>(w, x, group, i, y);
      }
      for (; i + 2 <= x_end; i += 2) GroupTile<Step, 2>(w, x, group, i, y);
      for (; i < x_end; ++i) GroupTile<Step, 1>(w, x, group, i, y);
    }
  }
}

}  // namespace

void LinearRowsPackedBf16Avx2(const PackedWeightView& w, const PreparedActivations& x,
                              int64_t row_begin, int64_t row_end, float* y) {
  const FlushedSubnormals as_vdpbf16ps;  // bit for bit
  FloatRows<Bf16HalfStep>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedF16Avx2(const PackedWeightView& w, const PreparedActivations& x,
                             int64_t row_begin, int64_t row_end, float* y) {
  FloatRows<F16HalfStep>(w, x, row_begin, row_end, y);
}

}  // namespace vllm::kernels
