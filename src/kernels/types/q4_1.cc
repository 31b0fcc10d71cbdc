// Q4_1: d q + m, q 4-bit, 32 values per block (ggml's block_q4_1).
#include "kernels/types/nibble_blocks.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

void DecodeQ4_1(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ4_1*>(block);
  SplitNibbles(b.qs, out->q);
  out->scale[0] = Fp16ToFp32(b.d);
  out->min[0] = -Fp16ToFp32(b.m);
}

// ggml's quantize_row_q4_1_ref.
void QuantizeRowQ4_1(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockQ4_1*>(out);
  uint8_t levels[kQuantBlockSize];
  for (int64_t b = 0; b < n / kQuantBlockSize; ++b) {
    QuantizeMinMaxBlock(x + b * kQuantBlockSize, 15, &blocks[b].d, &blocks[b].m, levels);
    PackNibbles(levels, blocks[b].qs);
  }
}

}  // namespace

// Found by PackRecords<PackedQ4_1Record> (argument-dependent lookup).
void PutLane(const uint8_t* bytes, int64_t lane, PackedQ4_1Record& record) {
  const auto& block = *reinterpret_cast<const BlockQ4_1*>(bytes);
  record.d[lane] = block.d;
  record.m[lane] = block.m;
  PutChunkNibbles(block.qs, lane, record.nibbles);
}

TypeTraits Q4_1Entry() {
  return IntegerType<GgmlType::kQ4_1>(32, DecodeQ4_1, QuantizeRowQ4_1,
                                      NibbleForm<PackedQ4_1Record>(GgmlType::kQ4_1));
}

}  // namespace vllm::kernels
