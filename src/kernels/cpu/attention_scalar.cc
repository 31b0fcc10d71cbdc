// AttendTile and DequantizeKvRow, the baseline x86-64 build of cpu/attention_tile_impl.h.
#include <cstdint>

#include "kernels/attention_internal.h"

namespace vllm::kernels {
namespace {
#include "kernels/cpu/attention_tile_impl.h"
}  // namespace

void AttendTileScalar(const AttentionTile& tile, const AttentionState& state, float* scratch) {
  AttendTileImpl(tile, state, scratch, LoadKeysByRow, LoadValuesByRow);
}

void DequantizeKvRow(KvCacheDtype dtype, const void* row, float scale, int64_t n, float* out) {
  DecodeKvRow(dtype, static_cast<const uint8_t*>(row), scale, n, out);
}

}  // namespace vllm::kernels
