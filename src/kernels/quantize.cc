// The per-call activation preparation, and the BF16 row conversions it shares with the BF16 type.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/half.h"
#include "kernels/linear_internal.h"
#include "kernels/quantizers.h"
#include "kernels/row_conversions.h"

namespace vllm::kernels {

void QuantizeRowBf16(const float* x, int64_t n, void* out) {
  auto* halves = static_cast<uint16_t*>(out);
  for (int64_t i = 0; i < n; ++i) halves[i] = Fp32ToBf16(x[i]);
}
void DequantizeRowBf16(const void* row, int64_t n, float* out) {
  const auto* halves = static_cast<const uint16_t*>(row);
  for (int64_t i = 0; i < n; ++i) out[i] = Bf16ToFp32(halves[i]);
}

// Activations, as ggml's x86 quantize_row_q8_0 quantizes them at run time (so that a Q8_0 product
// sees llama.cpp's activation quants): d = max|x| / 127 as Q8_0's reference quantizer
// (types/q8_0.cc), q = round(x · (127 / max|x|)), ties to even; kQ8K takes max|x| over each 256
// values (ggml's quantize_row_q8_K) and keeps d in f32. scales: [n / 32] the f32 d each block's dot
// products use.
static void QuantizeActivationRow(ActivationFormat format, const float* x, int64_t n,
                                  BlockQ8_0* blocks, float* scales) {
  const int64_t blocks_per_scale = Q8BlocksPerScale(format);
  const int64_t values_per_scale = blocks_per_scale * kQuantBlockSize;
  for (int64_t first = 0; first < n / kQuantBlockSize; first += blocks_per_scale) {
    const float* values = x + first * kQuantBlockSize;
    float amax = 0.0f;
    for (int64_t i = 0; i < values_per_scale; ++i) amax = std::max(amax, std::fabs(values[i]));
    const uint16_t d_bits = Fp32ToFp16(amax / 127.0f);
    const float scale = format == ActivationFormat::kQ8K ? amax / 127.0f : Fp16ToFp32(d_bits);
    const float multiplier = amax != 0.0f ? 127.0f / amax : 0.0f;
    for (int64_t b = first; b < first + blocks_per_scale; ++b) {
      blocks[b].d = d_bits;
      scales[b] = scale;
      for (int i = 0; i < kQuantBlockSize; ++i) {
        blocks[b].qs[i] =
            static_cast<int8_t>(internal::RoundToInt(x[b * kQuantBlockSize + i] * multiplier));
      }
    }
  }
}

// x's bf16 rows [begin, end) into their places in bf16_tiles.
void CopyRowsToTiles(PreparedActivations& x, int64_t begin, int64_t end) {
  constexpr int64_t kTileRows = 16;
  const int64_t num_blocks = x.cols / kQuantBlockSize;
  for (int64_t i = begin; i < end; ++i) {
    const int64_t first_row = i / kTileRows * kTileRows;
    const int64_t tile_rows = std::min(kTileRows, x.m - first_row);
    uint16_t* tile = x.bf16_tiles.data() + first_row * x.cols;
    for (int64_t b = 0; b < num_blocks; ++b) {
      std::memcpy(tile + (b * tile_rows + i - first_row) * kQuantBlockSize,
                  x.bf16.data() + i * x.cols + b * kQuantBlockSize, kQuantBlockSize * 2);
    }
  }
}

// Activations converted on the calling thread below this many values (about 20 µs of work).
constexpr int64_t kValuesPerParallelConversion = int64_t{1} << 15;

// x's row `row` with its columns in `input_order` ([cols]).
static void GatherRow(const float* x, int64_t row, int64_t cols, const int32_t* input_order,
                      float* ordered_row) {
  const float* values = x + row * cols;
  for (int64_t j = 0; j < cols; ++j) ordered_row[j] = values[input_order[j]];
}

PreparedActivations PrepareActivations(Isa isa, ActivationFormat format, const float* x, int64_t m,
                                       int64_t cols, ThreadPool& pool, const int32_t* input_order) {
  PreparedActivations prepared;
  prepared.m = m;
  prepared.cols = cols;
  prepared.f32 = x;
  const int64_t count = m * cols;
  // Rows are independent: each thread converts its own range, unless there is too little to
  // convert to pay for waking the pool (a few decode rows, an expert's one or two tokens).
  auto for_rows = [&](auto&& convert_range) {
    if (count < kValuesPerParallelConversion) {
      convert_range(0, m);
    } else {
      pool.ParallelFor(m, convert_range);
    }
  };
  if (format == ActivationFormat::kF32) {
    // F32 / F16 weights read x itself: in an input order, a copy of it in that order.
    if (input_order != nullptr) {
      prepared.ordered_x.resize(count);
      for_rows([&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          GatherRow(x, i, cols, input_order, prepared.ordered_x.data() + i * cols);
        }
      });
      prepared.f32 = prepared.ordered_x.data();
    }
    return prepared;
  }
  const int64_t blocks_per_row = cols / kQuantBlockSize;
  // BF16 weights take x as bf16 bits (vdpbf16ps) and, on the FMA kernels, as f32 values.
  const bool bf16_as_f32 = format == ActivationFormat::kBf16 &&
                           (isa != Isa::kAvx512 || Bf16WeightPath() == Bf16Path::kFmas);
  const bool bf16_tiles = format == ActivationFormat::kBf16 && isa == Isa::kAvx512 &&
                          Bf16WeightPath() == Bf16Path::kTiles;
  if (format == ActivationFormat::kBf16) {
    prepared.bf16.resize(count);
    if (bf16_as_f32) prepared.bf16_as_f32.resize(count);
    if (bf16_tiles) prepared.bf16_tiles.resize(count);
  } else if (format == ActivationFormat::kQ8 || format == ActivationFormat::kQ8K) {
    prepared.q8.resize(m * blocks_per_row);
    prepared.q8_scales.resize(m * blocks_per_row);
    prepared.q8_sums.resize(m * blocks_per_row);
    prepared.q8_half_sums.resize(m * blocks_per_row * 2);
  }
  // Rows [begin, end) from `rows` (their values, [end - begin, cols]).
  auto convert = [&](const float* rows, int64_t begin, int64_t end) {
    const int64_t offset = begin * cols;
    const int64_t length = (end - begin) * cols;
    if (format == ActivationFormat::kBf16) {
      QuantizeRowBf16(rows, length, prepared.bf16.data() + offset);
      if (bf16_as_f32) {
        DequantizeRowBf16(prepared.bf16.data() + offset, length,
                          prepared.bf16_as_f32.data() + offset);
      }
      if (bf16_tiles) CopyRowsToTiles(prepared, begin, end);
      return;
    }
    const int64_t first = begin * blocks_per_row;
    if (isa == Isa::kAvx512 || isa == Isa::kAvx2) {
      (isa == Isa::kAvx512 ? PrepareQ8BlocksAvx512 : PrepareQ8BlocksAvx2)(
          format, rows, (end - begin) * blocks_per_row, prepared.q8.data() + first,
          prepared.q8_scales.data() + first, prepared.q8_sums.data() + first,
          prepared.q8_half_sums.data() + 2 * first);
      return;
    }
    QuantizeActivationRow(format, rows, length, prepared.q8.data() + first,
                          prepared.q8_scales.data() + first);
    for (int64_t b = first; b < end * blocks_per_row; ++b) {
      const BlockQ8_0& block = prepared.q8[b];
      int32_t half_sums[2] = {0, 0};
      for (int k = 0; k < kQuantBlockSize; ++k) half_sums[k / 16] += block.qs[k];
      prepared.q8_half_sums[2 * b] = half_sums[0];
      prepared.q8_half_sums[2 * b + 1] = half_sums[1];
      prepared.q8_sums[b] = half_sums[0] + half_sums[1];
    }
  };
  for_rows([&](int64_t begin, int64_t end) {
    if (input_order == nullptr) {
      convert(x + begin * cols, begin, end);
      return;
    }
    // One row at a time through a buffer that stays in cache: no ordered copy of all of x.
    UninitializedVector<float> ordered_row(cols);
    for (int64_t i = begin; i < end; ++i) {
      GatherRow(x, i, cols, input_order, ordered_row.data());
      convert(ordered_row.data(), i, i + 1);
    }
  });
  return prepared;
}

}  // namespace vllm::kernels
