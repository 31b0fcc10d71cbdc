// Packing Q8_0 weights into the layout of the AVX-512 VNNI kernel (PackedQ8View).
#include <cstring>

#include "kernels/linear_internal.h"

namespace vllm::kernels {

void PackQ8_0(const WeightView& w, uint8_t* quants, uint16_t* scales) {
  const int64_t num_blocks = w.cols / kQuantBlockSize;
  for (int64_t group = 0; group < w.rows / kPackedRowsPerGroup; ++group) {
    for (int64_t b = 0; b < num_blocks; ++b) {
      uint8_t* block_quants =
          quants + (group * num_blocks + b) * kQuantBlockSize * kPackedRowsPerGroup;
      uint16_t* block_scales = scales + (group * num_blocks + b) * kPackedRowsPerGroup;
      for (int64_t lane = 0; lane < kPackedRowsPerGroup; ++lane) {
        const auto* row = reinterpret_cast<const BlockQ8_0*>(
            w.data + (group * kPackedRowsPerGroup + lane) * w.row_bytes);
        block_scales[lane] = row[b].d;
        for (int step = 0; step < 8; ++step) {
          for (int i = 0; i < 4; ++i) {
            block_quants[step * 64 + lane * 4 + i] =
                static_cast<uint8_t>(row[b].qs[step * 4 + i] + 128);
          }
        }
      }
    }
  }
}

}  // namespace vllm::kernels
