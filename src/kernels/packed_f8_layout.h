// Internal: the packed layout of F8_E4M3_B32 (types/f8_e4m3_b32.cc packs it) for its AVX-512 and
// AVX2 kernels (cpu/linear_packed_f8_avx512.cc, cpu/linear_packed_f8_avx2.cc).
//
// BF16's packed layout (pack_quantized.cc) with one byte per value: rows are interleaved in groups
// of 16, one row per 32-bit lane once widened. Group g, block b (32 columns) is one record of
// 576 bytes, records of a group in column order, groups one after another:
//
//   codes  [16 steps k][16 lanes l][2]   row 16g + l's e4m3 codes of columns 2k, 2k + 1
//   scales [16 lanes] f32                 row 16g + l's d of the block
//
// After the records, per group a uint32 whose bit l is set where row 16g + l keeps one scale in
// every block (F8RowKeepsOneScale: per-tensor and per-channel checkpoints, --quantization fp8).
//
// Widened with sign extension to 16 bits, a step is exactly a step of BF16's layout (lane l: the
// bf16 of column 2k in its low half, 2k + 1 in its high half): e4m3 → bf16 is exact. Every path
// computes, per row and x row (x rounded to bf16, ActivationFormat::kBf16), each step as vdpbf16ps
// does it (odd column, then even, each rounded; denormal inputs and results flushed):
//   a row that keeps one scale d: y = d · a, a summed from 0 over every step of the row in order
//     (one chain, as BF16's kernels: the scale costs one multiply per row, not one per block);
//   any other row: y = Σ_blocks in order d_b · s_b, s_b summed from 0 over the block's 16 steps
//     and y_b = fma(s_b, d_b, y_{b-1}).
// A row's arithmetic depends on its own scales only. Prefill widens a pair of groups once into a
// thread-local BF16 tile and runs it over every x row; decode widens each step in registers: the
// same arithmetic, so a row's result does not depend on m.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/linear_internal.h"
#include "kernels/quant_blocks.h"

namespace vllm::kernels {

inline constexpr int64_t kF8RowsPerGroup = 16;
inline constexpr int64_t kF8StepsPerBlock = 16;
inline constexpr int64_t kF8StepBytes = 32;  // 16 lanes × 2 codes
inline constexpr int64_t kF8CodeBytesPerRecord = kF8StepsPerBlock * kF8StepBytes;
inline constexpr int64_t kF8RecordBytes = kF8CodeBytesPerRecord + kF8RowsPerGroup * 4;

inline constexpr uint32_t kF8AllLanes = (1u << kF8RowsPerGroup) - 1;

inline int64_t PackedF8RecordBytes(int64_t rows, int64_t cols) {
  return rows / kF8RowsPerGroup * (cols / 32) * kF8RecordBytes;
}
inline int64_t PackedF8Bytes(int64_t rows, int64_t cols) {
  return PackedF8RecordBytes(rows, cols) + rows / kF8RowsPerGroup * int64_t{sizeof(uint32_t)};
}
// Group `group`'s lanes whose row keeps one scale (bit l: row 16 group + l).
inline uint32_t F8OneScaleLanes(const PackedWeightView& w, int64_t group) {
  uint32_t lanes;
  std::memcpy(&lanes, w.data + PackedF8RecordBytes(w.rows, w.cols) + group * sizeof(lanes),
              sizeof(lanes));
  return lanes;
}

// Whether a row's blocks all have the same scale, bit for bit (then it is summed as one chain).
bool F8RowKeepsOneScale(const BlockF8_E4M3_B32* row, int64_t num_blocks);

// The bf16 bits of an e4m3fn code (exact; the kernels' widening gives the same bits).
uint16_t F8E4m3ToBf16Bits(uint8_t code);

// y: [m, rows] for W rows [row_begin, row_end) (multiples of 16), the arithmetic above. AVX-512:
// vdpbf16ps on x.bf16, or (Bf16WeightPath() kFmas) f32 FMAs under FTZ / DAZ on x.bf16_as_f32, the
// same bits; the Dot / Fma variants are the two, for tests.
VLLM_X86_KERNEL void LinearRowsPackedF8Avx512(const PackedWeightView& w,
                                              const PreparedActivations& x, int64_t row_begin,
                                              int64_t row_end, float* y);
VLLM_X86_KERNEL void LinearRowsPackedF8DotAvx512(const PackedWeightView& w,
                                                 const PreparedActivations& x, int64_t row_begin,
                                                 int64_t row_end, float* y);
VLLM_X86_KERNEL void LinearRowsPackedF8FmaAvx512(const PackedWeightView& w,
                                                 const PreparedActivations& x, int64_t row_begin,
                                                 int64_t row_end, float* y);
// AVX2: f32 FMAs under FTZ / DAZ on x.bf16_as_f32, groups as two halves of 8 rows: the same bits.
VLLM_X86_KERNEL void LinearRowsPackedF8Avx2(const PackedWeightView& w, const PreparedActivations& x,
                                            int64_t row_begin, int64_t row_end, float* y);

}  // namespace vllm::kernels
