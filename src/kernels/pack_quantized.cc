// Packing Q8_0 / BF16 / F16 weights into the layout of the AVX-512 kernels in
// cpu/linear_packed_avx512.cc (any CPU can pack; AVX-512 VNNI / BF16 ones compute, and AVX2 ones:
// cpu/linear_packed_q8_0_avx2.cc, cpu/linear_packed_float_avx2.cc).
//
// 16 rows at a time (rows a multiple of 16, cols of 32), so one instruction serves 16 rows: 4
// consecutive quants of a row share a lane (unsigned, vpdpbusd's first operand), or 2 consecutive
// bf16 values (vdpbf16ps), or 1 f16 value (converted to a 16-lane f32 vector). For row group g
// and 32-column block b:
//   Q8_0: 8 steps k of 64 bytes; lane l holds row 16g + l's quants [4k, 4k + 4) plus 128.
//   BF16: 16 steps k of 64 bytes; lane l holds row 16g + l's values [2k, 2k + 2).
//   F16:  32 steps k of 32 bytes; lane l holds row 16g + l's value k.
// The quants of all groups come first ([rows / 16][cols / 32][group block bytes]), then for Q8_0
// the blocks' fp16 scales ([rows / 16][cols / 32][16]).
#include "kernels/packed_q8_layout.h"
#include "kernels/quant_blocks.h"

namespace vllm::kernels {

void PackQ8Layout(const WeightView& w, uint8_t* out) {
  const GgmlType type = w.traits->layout.type;
  const int64_t num_blocks = w.cols / kQuantBlockSize;
  const int64_t group_block_bytes = PackedBytesPerGroupBlock(type);
  uint8_t* quants = out;
  auto* scales = reinterpret_cast<uint16_t*>(out + PackedQuantBytes(type, w.rows, w.cols));
  for (int64_t group = 0; group < w.rows / kPackedRowsPerGroup; ++group) {
    for (int64_t b = 0; b < num_blocks; ++b) {
      uint8_t* block_quants = quants + (group * num_blocks + b) * group_block_bytes;
      uint16_t* block_scales = scales + (group * num_blocks + b) * kPackedRowsPerGroup;  // Q8_0
      for (int64_t lane = 0; lane < kPackedRowsPerGroup; ++lane) {
        const uint8_t* row = w.data + (group * kPackedRowsPerGroup + lane) * w.row_bytes;
        if (IsPackedFloat(type)) {
          // Bytes of one row's values per step: 2 bf16 or 1 f16.
          const int lane_bytes = type == GgmlType::kBF16 ? 4 : 2;
          const int64_t block_row_bytes = kQuantBlockSize * 2;
          const uint8_t* values = row + b * block_row_bytes;
          for (int step = 0; step < block_row_bytes / lane_bytes; ++step) {
            for (int i = 0; i < lane_bytes; ++i) {
              block_quants[(step * kPackedRowsPerGroup + lane) * lane_bytes + i] =
                  values[step * lane_bytes + i];
            }
          }
        } else {
          const BlockQ8_0& block = reinterpret_cast<const BlockQ8_0*>(row)[b];
          block_scales[lane] = block.d;
          for (int step = 0; step < 8; ++step) {
            for (int i = 0; i < 4; ++i) {
              block_quants[step * 64 + lane * 4 + i] =
                  static_cast<uint8_t>(block.qs[step * 4 + i] + 128);
            }
          }
        }
      }
    }
  }
}

}  // namespace vllm::kernels
