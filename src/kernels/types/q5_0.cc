// Q5_0: d (q − 16), q 5-bit (a nibble and a 5th bit in qh), 32 values per block (ggml's
// block_q5_0). Packed with its 5th bits as a plane.
#include "kernels/quantizers.h"
#include "kernels/types/nibble_blocks.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

void DecodeQ5_0(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ5_0*>(block);
  SplitNibbles(b.qs, out->q);
  AddFifthBits(b.qh, out->q);
  for (int j = 0; j < 32; ++j) out->q[j] = static_cast<int8_t>(out->q[j] - 16);
  SetScale(Fp16ToFp32(b.d), 1, out);
}

// ggml's quantize_row_q5_0_ref: d = (value of largest magnitude) / -16, so that value maps to
// level 0 exactly; level = x / d + 16 rounded half up, at most 31.
void QuantizeRowQ5_0(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockQ5_0*>(out);
  uint8_t levels[kQuantBlockSize];
  for (int64_t b = 0; b < n / kQuantBlockSize; ++b) {
    const float* block_x = x + b * kQuantBlockSize;
    const float d = internal::LargestMagnitude(block_x, kQuantBlockSize) / -16.0f;
    const float inverse_d = InverseOrZero(d);
    blocks[b].d = Fp32ToFp16(d);
    for (int j = 0; j < kQuantBlockSize; ++j) {
      levels[j] =
          static_cast<uint8_t>(std::min(31, static_cast<int>(block_x[j] * inverse_d + 16.5f)));
    }
    PackNibbles(levels, blocks[b].qs);
    PackFifthBits(levels, blocks[b].qh);
  }
}

}  // namespace

// Found by PackRecords<PackedQ5_0Record> (argument-dependent lookup).
void PutLane(const uint8_t* bytes, int64_t lane, PackedQ5_0Record& record) {
  const auto& block = *reinterpret_cast<const BlockQ5_0*>(bytes);
  record.d[lane] = block.d;
  PutFifthBitCodes(block, lane, record.codes);
}

TypeTraits Q5_0Entry() {
  return IntegerType<GgmlType::kQ5_0>(32, DecodeQ5_0, QuantizeRowQ5_0,
                                      NibbleForm<PackedQ5_0Record>(GgmlType::kQ5_0));
}

}  // namespace vllm::kernels
