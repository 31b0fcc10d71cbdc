// Q4_K: d sc q − dmin mn, q 4-bit, 8 sub-blocks of 32 with 6-bit scales sc and mins mn (packed in
// 12 bytes) per 256 values (ggml's block_q4_K).
#include "kernels/types/k_quants.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

using internal::QuantizeScaleMinSuperBlock;
using internal::ScaleMinSearch;

void DecodeQ4_K(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ4_K*>(block);
  SplitChunkNibbles(b.qs, out->q);
  KQuantScalesAndMins(b.d, b.dmin, b.scales, out);
}

// ggml's quantize_row_q4_K_ref.
void QuantizeRowQ4_K(const float* x, int64_t n, void* out) {
  constexpr ScaleMinSearch kSearch = {-1.0f, 0.1f, 20, false};
  auto* blocks = static_cast<BlockQ4_K*>(out);
  for (int64_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockQ4_K& block = blocks[b];
    uint8_t levels[kSuperBlockSize];
    QuantizeScaleMinSuperBlock(x, 15, kSearch, &block.d, &block.dmin, block.scales, levels);
    for (int chunk = 0; chunk < 4; ++chunk) {
      for (int l = 0; l < 32; ++l) {
        block.qs[32 * chunk + l] =
            static_cast<uint8_t>(levels[64 * chunk + l] | (levels[64 * chunk + l + 32] << 4));
      }
    }
  }
}

}  // namespace

// Found by PackRecords<PackedQ4_KRecord> (argument-dependent lookup).
void PutLane(const uint8_t* bytes, int64_t lane, PackedQ4_KRecord& record) {
  const auto& block = *reinterpret_cast<const BlockQ4_K*>(bytes);
  DecodedBlock decoded;
  DecodeQ4_K(&block, &decoded);  // q: 0..15
  PutScalesMinsAndNibbles(block, decoded, lane, record);
}

TypeTraits Q4_KEntry() {
  return WithQ8KActivations(IntegerType<GgmlType::kQ4_K>(
      32, DecodeQ4_K, QuantizeRowQ4_K, NibbleForm<PackedQ4_KRecord>(GgmlType::kQ4_K)));
}

}  // namespace vllm::kernels
