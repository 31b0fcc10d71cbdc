// Packing Q8_0 / Q4_0 / BF16 weights into the layout of the AVX-512 VNNI kernel (PackedWeightView).
#include "kernels/linear_internal.h"

namespace vllm::kernels {

void PackQuantized(const WeightView& w, uint8_t* quants, uint16_t* scales) {
  const int64_t num_blocks = w.cols / kQuantBlockSize;
  const int64_t group_block_bytes = PackedBytesPerGroupBlock(w.type);
  for (int64_t group = 0; group < w.rows / kPackedRowsPerGroup; ++group) {
    for (int64_t b = 0; b < num_blocks; ++b) {
      uint8_t* block_quants = quants + (group * num_blocks + b) * group_block_bytes;
      uint16_t* block_scales = scales + (group * num_blocks + b) * kPackedRowsPerGroup;  // Q8/Q4
      for (int64_t lane = 0; lane < kPackedRowsPerGroup; ++lane) {
        const uint8_t* row = w.data + (group * kPackedRowsPerGroup + lane) * w.row_bytes;
        if (w.type == GgmlType::kBF16) {
          const auto* values = reinterpret_cast<const uint8_t*>(row) + b * kQuantBlockSize * 2;
          for (int step = 0; step < 16; ++step) {
            for (int i = 0; i < 4; ++i)
              block_quants[step * 64 + lane * 4 + i] = values[step * 4 + i];
          }
        } else if (w.type == GgmlType::kQ4_0) {
          const BlockQ4_0& block = reinterpret_cast<const BlockQ4_0*>(row)[b];
          block_scales[lane] = block.d;
          for (int step = 0; step < 4; ++step) {
            for (int i = 0; i < 4; ++i)
              block_quants[step * 64 + lane * 4 + i] = block.qs[step * 4 + i];
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
