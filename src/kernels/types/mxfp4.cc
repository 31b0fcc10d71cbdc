// MXFP4: 2^(e − 128) kMxfp4Values[q], q a 4-bit E2M1 code (its values doubled), one E8M0 exponent
// per 32 values (ggml's block_mxfp4).
#include "kernels/types/nibble_blocks.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

void DecodeMxfp4(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockMxfp4*>(block);
  SplitNibbles(b.qs, out->q);
  MapThroughGrid(kMxfp4Values, out->q);
  SetScale(E8m0ToFp32Half(b.e), 1, out);
}

// The index of the kMxfp4Values entry whose multiple of `unit` is nearest to v (the first on
// ties).
int NearestMxfp4Index(float v, float unit) {
  int best_index = 0;
  float best_error = std::fabs(kMxfp4Values[0] * unit - v);
  for (int i = 1; i < 16; ++i) {
    const float error = std::fabs(kMxfp4Values[i] * unit - v);
    if (error < best_error) {
      best_index = i;
      best_error = error;
    }
  }
  return best_index;
}

// ggml's quantize_row_mxfp4_ref: the shared exponent e puts the largest magnitude at 4 to 8 units
// of 2^(e - 127), E2M1's top binade (4, 6); each value takes its nearest E2M1 value.
void QuantizeRowMxfp4(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockMxfp4*>(out);
  for (int64_t b = 0; b < n / kQuantBlockSize; ++b) {
    const float* block_x = x + b * kQuantBlockSize;
    float amax = 0.0f;
    for (int j = 0; j < kQuantBlockSize; ++j) amax = std::max(amax, std::fabs(block_x[j]));
    // Below 2^-125 the exponent would go negative: clamp to the smallest scale.
    const uint8_t exponent =
        amax > 0.0f ? static_cast<uint8_t>(std::max(std::floor(std::log2(amax)) - 2 + 127, 0.0f))
                    : 0;
    const float unit = E8m0ToFp32Half(exponent);
    blocks[b].e = exponent;
    uint8_t indices[kQuantBlockSize];
    for (int j = 0; j < kQuantBlockSize; ++j) {
      indices[j] = static_cast<uint8_t>(NearestMxfp4Index(block_x[j], unit));
    }
    PackNibbles(indices, blocks[b].qs);
  }
}

}  // namespace

// Found by PackRecords<PackedMxfp4Record> (argument-dependent lookup).
void PutLane(const uint8_t* bytes, int64_t lane, PackedMxfp4Record& record) {
  const auto& block = *reinterpret_cast<const BlockMxfp4*>(bytes);
  record.e[lane] = block.e;
  PutChunkNibbles(block.qs, lane, record.nibbles);
}

TypeTraits Mxfp4Entry() {
  return IntegerType<GgmlType::kMXFP4>(32, DecodeMxfp4, QuantizeRowMxfp4,
                                       NibbleForm<PackedMxfp4Record>(GgmlType::kMXFP4));
}

}  // namespace vllm::kernels
