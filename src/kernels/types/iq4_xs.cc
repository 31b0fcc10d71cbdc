// IQ4_XS: d (ls − 32) kIq4NlValues[q], 8 sub-blocks of 32 with 6-bit scales ls (scales_l /
// scales_h) per 256 values (ggml's block_iq4_xs); IQ4_NL's grid and grid search (iq4_nl.cc).
#include "kernels/quantizers.h"
#include "kernels/types/nibble_blocks.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

void DecodeIq4Xs(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockIq4Xs*>(block);
  const float d = Fp16ToFp32(b.d);
  for (int s = 0; s < 8; ++s) {
    SplitNibbles(b.qs + 16 * s, out->q + 32 * s);
    MapThroughGrid(kIq4NlValues, out->q + 32 * s);
    const int low = (b.scales_l[s / 2] >> (4 * (s % 2))) & 0x0f;
    const int high = (b.scales_h >> (2 * s)) & 3;
    out->scale[s] = d * ((low | (high << 4)) - 32);
    out->min[s] = 0.0f;
  }
}

// ggml's quantize_iq4_xs without an importance matrix: the best IQ4_NL grid scale per sub-block of
// 32, quantized to 6 bits (stored + 32) against the one of largest magnitude, which maps to -32;
// then each value's nearest grid entry at its sub-block's stored scale.
void QuantizeRowIq4Xs(const float* x, int64_t n, void* out) {
  constexpr int kSubBlocks = kSuperBlockSize / 32;
  auto* blocks = static_cast<BlockIq4Xs*>(out);
  for (int64_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockIq4Xs& block = blocks[b];
    float scales[kSubBlocks];
    for (int j = 0; j < kSubBlocks; ++j) scales[j] = internal::BestIq4NlScale(x + 32 * j);
    const float d = -internal::LargestMagnitude(scales, kSubBlocks) / 32;
    block.d = Fp32ToFp16(d);
    const float inverse_d = d != 0.0f ? 1.0f / d : 0.0f;
    block.scales_h = 0;
    std::memset(block.scales_l, 0, sizeof(block.scales_l));
    for (int j = 0; j < kSubBlocks; ++j) {
      const int scale = std::clamp(internal::RoundToInt(inverse_d * scales[j]), -32, 31);
      const float sub_d = d * scale;
      internal::QuantizeIq4NlIndices(x + 32 * j, sub_d != 0.0f ? 1.0f / sub_d : 0.0f,
                                     block.qs + 16 * j);
      const int stored = scale + 32;
      block.scales_l[j / 2] |= static_cast<uint8_t>((stored & 0x0f) << (4 * (j % 2)));
      block.scales_h |= static_cast<uint16_t>((stored >> 4) << (2 * j));
    }
  }
}

}  // namespace

// Found by PackRecords<PackedIq4XsRecord> (argument-dependent lookup).
void PutLane(const uint8_t* bytes, int64_t lane, PackedIq4XsRecord& record) {
  const auto& block = *reinterpret_cast<const BlockIq4Xs*>(bytes);
  record.d[lane] = block.d;
  for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
    const int low = (block.scales_l[chunk / 2] >> (4 * (chunk % 2))) & 0x0f;
    const int high = (block.scales_h >> (2 * chunk)) & 3;
    record.scales[chunk][lane] = static_cast<int8_t>((low | (high << 4)) - 32);
    PutChunkNibbles(block.qs + 16 * chunk, lane, record.nibbles[chunk]);
  }
}

TypeTraits Iq4XsEntry() {
  return IntegerType<GgmlType::kIQ4_XS>(32, DecodeIq4Xs, QuantizeRowIq4Xs,
                                        NibbleForm<PackedIq4XsRecord>(GgmlType::kIQ4_XS));
}

}  // namespace vllm::kernels
