// Q5_1: d q + m, q 5-bit (a nibble and a 5th bit in qh), 32 values per block (ggml's
// block_q5_1). Packed with its 5th bits as a plane.
#include "kernels/types/nibble_blocks.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

void DecodeQ5_1(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ5_1*>(block);
  SplitNibbles(b.qs, out->q);
  AddFifthBits(b.qh, out->q);
  out->scale[0] = Fp16ToFp32(b.d);
  out->min[0] = -Fp16ToFp32(b.m);
}

// ggml's quantize_row_q5_1_ref.
void QuantizeRowQ5_1(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockQ5_1*>(out);
  uint8_t levels[kQuantBlockSize];
  for (int64_t b = 0; b < n / kQuantBlockSize; ++b) {
    QuantizeMinMaxBlock(x + b * kQuantBlockSize, 31, &blocks[b].d, &blocks[b].m, levels);
    PackNibbles(levels, blocks[b].qs);
    PackFifthBits(levels, blocks[b].qh);
  }
}

}  // namespace

// Found by PackRecords<PackedQ5_1Record> (argument-dependent lookup).
void PutLane(const uint8_t* bytes, int64_t lane, PackedQ5_1Record& record) {
  const auto& block = *reinterpret_cast<const BlockQ5_1*>(bytes);
  record.d[lane] = block.d;
  record.m[lane] = block.m;
  PutFifthBitCodes(block, lane, record.codes);
}

TypeTraits Q5_1Entry() {
  return IntegerType<GgmlType::kQ5_1>(32, DecodeQ5_1, QuantizeRowQ5_1,
                                      NibbleForm<PackedQ5_1Record>(GgmlType::kQ5_1));
}

}  // namespace vllm::kernels
