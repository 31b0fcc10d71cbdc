// Q4_Z (not a ggml type: zero-point checkpoints as they load, common/ggml_type.h): d (q − z),
// q 4-bit, an integer zero point z 0..31 per 32 values (BlockQ4_Z). Its packed AVX-512 kernel folds
// the zero into the integer dot (the record's bias byte 32 − z).
#include "kernels/quantizers.h"
#include "kernels/types/nibble_blocks.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

void DecodeQ4_Z(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ4_Z*>(block);
  SplitNibbles(b.qs, out->q);
  const int zero = b.z & kQ4ZeroPointMask;
  for (int j = 0; j < 32; ++j) out->q[j] = static_cast<int8_t>(out->q[j] - zero);
  SetScale(Fp16ToFp32(b.d), 1, out);
}

// The block's range widened to hold 0, d = range / 15, the zero point z = −min / d rounded, so
// that 0 is a level, and each level x / d + z rounded into 0..15.
void QuantizeRowQ4_Z(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockQ4_Z*>(out);
  for (int64_t b = 0; b < n / kQuantBlockSize; ++b) {
    const float* values = x + b * kQuantBlockSize;
    float min = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < kQuantBlockSize; ++j) {
      min = std::min(min, values[j]);
      max = std::max(max, values[j]);
    }
    blocks[b].d = Fp32ToFp16((max - min) / 15.0f);
    const float inverse_d = InverseOrZero(Fp16ToFp32(blocks[b].d));
    const int zero = std::clamp(internal::RoundToInt(-min * inverse_d), 0, 15);
    blocks[b].z = static_cast<uint16_t>(zero);
    uint8_t levels[kQuantBlockSize];
    for (int j = 0; j < kQuantBlockSize; ++j) {
      levels[j] = static_cast<uint8_t>(
          std::clamp(internal::RoundToInt(values[j] * inverse_d) + zero, 0, 15));
    }
    PackNibbles(levels, blocks[b].qs);
  }
}

}  // namespace

// Found by PackRecords<PackedQ4_ZRecord> (argument-dependent lookup).
void PutLane(const uint8_t* bytes, int64_t lane, PackedQ4_ZRecord& record) {
  const auto& block = *reinterpret_cast<const BlockQ4_Z*>(bytes);
  record.d[lane] = block.d;
  record.biases[lane] = static_cast<uint8_t>(32 - (block.z & kQ4ZeroPointMask));
  PutChunkNibbles(block.qs, lane, record.nibbles);
}

TypeTraits Q4_ZEntry() {
  return IntegerType<GgmlType::kQ4_Z>(32, DecodeQ4_Z, QuantizeRowQ4_Z,
                                      NibbleForm<PackedQ4_ZRecord>(GgmlType::kQ4_Z));
}

}  // namespace vllm::kernels
