// AttendTile, the AVX2 + FMA build of cpu/attention_tile_impl.h.
#include <cstdint>

#include "kernels/attention_internal.h"

namespace vllm::kernels {
namespace {
#include "kernels/cpu/attention_tile_impl.h"
}  // namespace

void AttendTileAvx2(const AttentionTile& tile, const AttentionState& state, float* scratch) {
  AttendTileImpl(tile, state, scratch, LoadKeysByRow, LoadValuesByRow);
}

}  // namespace vllm::kernels
