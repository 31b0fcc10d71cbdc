// F8_E4M3_B32 (not a ggml type: FP8 checkpoints as they load, common/ggml_type.h): 32 e4m3fn bytes
// and one f32 scale d per block, value d · e4m3(q) in f32, as vLLM dequantizes an FP8 weight. A
// per-tensor, per-channel or 128 × 128 block scale is each block's d exactly, so those checkpoints
// stay 8-bit. x is rounded to bf16 (e4m3 · bf16 products are exact in f32); the arithmetic of every
// path is packed_f8_layout.h's: a row whose blocks share one scale (per-tensor, per-channel) is one
// chain scaled once, any other row is scaled block by block. Packed for AVX-512 and AVX2; the
// scalar kernel serves in place.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "common/fp8.h"
#include "common/half.h"
#include "kernels/packed_f8_layout.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {

uint16_t F8E4m3ToBf16Bits(uint8_t code) {
  return static_cast<uint16_t>(BitsFromFp32(DecodeFp8E4m3(code)) >> 16);
}

bool F8RowKeepsOneScale(const BlockF8_E4M3_B32* row, int64_t num_blocks) {
  for (int64_t b = 1; b < num_blocks; ++b) {
    if (BitsFromFp32(row[b].d) != BitsFromFp32(row[0].d)) return false;
  }
  return true;
}

namespace {

void DequantizeRowF8E4m3(const void* row, int64_t n, float* out) {
  const auto* blocks = static_cast<const BlockF8_E4M3_B32*>(row);
  for (int64_t b = 0; b < n / kQuantBlockSize; ++b) {
    for (int j = 0; j < kQuantBlockSize; ++j) {
      out[b * kQuantBlockSize + j] = DecodeFp8E4m3(blocks[b].codes[j]) * blocks[b].d;
    }
  }
}

// Dynamic FP8 per block, as vLLM's per-tensor rule applied to 32 values: d = amax / 448, each
// value the nearest e4m3 of x / d (an all-zero block keeps d = 0 and zero codes).
void QuantizeRowF8E4m3(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockF8_E4M3_B32*>(out);
  for (int64_t b = 0; b < n / kQuantBlockSize; ++b) {
    const float* values = x + b * kQuantBlockSize;
    float max_magnitude = 0.0f;
    for (int j = 0; j < kQuantBlockSize; ++j) {
      max_magnitude = std::max(max_magnitude, std::fabs(values[j]));
    }
    blocks[b].d = max_magnitude / kFp8E4m3Max;
    for (int j = 0; j < kQuantBlockSize; ++j) {
      blocks[b].codes[j] = blocks[b].d > 0.0f ? EncodeFp8E4m3(values[j] / blocks[b].d) : 0;
    }
  }
}

// The SIMD kernels run under FTZ and DAZ (vdpbf16ps always does): subnormal inputs and results
// are zero.
inline float FlushSubnormal(float value) {
  return std::fabs(value) < FLT_MIN ? std::copysign(0.0f, value) : value;
}

// The in-place kernel of every ISA (packed weights take the SIMD ones): packed_f8_layout.h's
// arithmetic one element at a time, so its bits are theirs.
void LinearRowsF8E4m3Scalar(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                            int64_t row_end, float* y) {
  const int64_t num_blocks = w.cols / kQuantBlockSize;
  for (int64_t j = row_begin; j < row_end; ++j) {
    const auto* blocks = reinterpret_cast<const BlockF8_E4M3_B32*>(w.data + j * w.row_bytes);
    const bool one_scale = F8RowKeepsOneScale(blocks, num_blocks);
    for (int64_t i = 0; i < x.m; ++i) {
      const uint16_t* xr = x.bf16.data() + i * w.cols;
      float sum = 0.0f;
      float block_sum = 0.0f;  // one row-long chain where the row keeps one scale
      for (int64_t b = 0; b < num_blocks; ++b) {
        if (!one_scale) block_sum = 0.0f;
        for (int k = 0; k < kQuantBlockSize; k += 2) {
          for (int column : {k + 1, k}) {
            const float weight = DecodeFp8E4m3(blocks[b].codes[column]);
            const float value = FlushSubnormal(Bf16ToFp32(xr[b * kQuantBlockSize + column]));
            block_sum = FlushSubnormal(std::fma(weight, value, block_sum));
          }
        }
        if (!one_scale) sum = FlushSubnormal(std::fma(block_sum, FlushSubnormal(blocks[b].d), sum));
      }
      if (one_scale) sum = FlushSubnormal(block_sum * FlushSubnormal(blocks[0].d));
      y[i * w.rows + j] = sum;
    }
  }
}

void PackF8E4m3(const WeightView& w, uint8_t* out) {
  const int64_t num_blocks = w.cols / kQuantBlockSize;
  for (int64_t group = 0; group < w.rows / kF8RowsPerGroup; ++group) {
    for (int64_t b = 0; b < num_blocks; ++b) {
      uint8_t* record = out + (group * num_blocks + b) * kF8RecordBytes;
      auto* scales = reinterpret_cast<float*>(record + kF8CodeBytesPerRecord);
      for (int64_t lane = 0; lane < kF8RowsPerGroup; ++lane) {
        const auto* row = reinterpret_cast<const BlockF8_E4M3_B32*>(
            w.data + (group * kF8RowsPerGroup + lane) * w.row_bytes);
        scales[lane] = row[b].d;
        for (int64_t step = 0; step < kF8StepsPerBlock; ++step) {
          record[step * kF8StepBytes + 2 * lane] = row[b].codes[2 * step];
          record[step * kF8StepBytes + 2 * lane + 1] = row[b].codes[2 * step + 1];
        }
      }
    }
    uint32_t one_scale_lanes = 0;
    for (int64_t lane = 0; lane < kF8RowsPerGroup; ++lane) {
      const auto* row = reinterpret_cast<const BlockF8_E4M3_B32*>(
          w.data + (group * kF8RowsPerGroup + lane) * w.row_bytes);
      if (F8RowKeepsOneScale(row, num_blocks)) one_scale_lanes |= 1u << lane;
    }
    std::memcpy(out + PackedF8RecordBytes(w.rows, w.cols) + group * sizeof(one_scale_lanes),
                &one_scale_lanes, sizeof(one_scale_lanes));
  }
}

}  // namespace

TypeTraits F8E4m3B32Entry() {
  const PackedForm packed{
      .rows_per_group = kF8RowsPerGroup,
      .cols_per_block = kQuantBlockSize,
      .packed_bytes = PackedF8Bytes,
      .pack = PackF8E4m3,
      .kernels = {{}, {nullptr, LinearRowsPackedF8Avx2}, {nullptr, LinearRowsPackedF8Avx512}}};
  return TypeTraits{*FindSupportedType(GgmlType::kF8_E4M3_B32),
                    0,
                    ActivationFormat::kBf16,
                    nullptr,
                    DequantizeRowF8E4m3,
                    QuantizeRowF8E4m3,
                    // Every ISA's in-place kernel (kScalar, kAvx2, kAvx512, ARM's three).
                    {LinearRowsF8E4m3Scalar, LinearRowsF8E4m3Scalar, LinearRowsF8E4m3Scalar,
                     LinearRowsF8E4m3Scalar, LinearRowsF8E4m3Scalar, LinearRowsF8E4m3Scalar},
                    packed};
}

}  // namespace vllm::kernels
