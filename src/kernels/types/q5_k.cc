// Q5_K: as Q4_K with a 5th bit per value in qh (ggml's block_q5_K). Packed as Q4_K with a
// 5th-bit plane per chunk.
#include "kernels/types/k_quants.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

using internal::QuantizeScaleMinSuperBlock;
using internal::ScaleMinSearch;

void DecodeQ5_K(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ5_K*>(block);
  SplitChunkNibbles(b.qs, out->q);
  // Bit s of qh byte l is the 5th bit of sub-block s's element l.
  for (int s = 0; s < 8; ++s) {
    for (int l = 0; l < 32; ++l) {
      out->q[32 * s + l] = static_cast<int8_t>(out->q[32 * s + l] | (((b.qh[l] >> s) & 1) << 4));
    }
  }
  KQuantScalesAndMins(b.d, b.dmin, b.scales, out);
}

// ggml's quantize_row_q5_K_ref.
void QuantizeRowQ5_K(const float* x, int64_t n, void* out) {
  constexpr ScaleMinSearch kSearch = {-0.5f, 0.1f, 15, false};
  auto* blocks = static_cast<BlockQ5_K*>(out);
  for (int64_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockQ5_K& block = blocks[b];
    uint8_t levels[kSuperBlockSize];
    QuantizeScaleMinSuperBlock(x, 31, kSearch, &block.d, &block.dmin, block.scales, levels);
    std::memset(block.qh, 0, sizeof(block.qh));
    for (int chunk = 0; chunk < 4; ++chunk) {
      for (int l = 0; l < 32; ++l) {
        const uint8_t low = levels[64 * chunk + l];
        const uint8_t high = levels[64 * chunk + l + 32];
        block.qs[32 * chunk + l] = static_cast<uint8_t>((low & 0x0f) | ((high & 0x0f) << 4));
        block.qh[l] |=
            static_cast<uint8_t>(((low >> 4) << (2 * chunk)) | ((high >> 4) << (2 * chunk + 1)));
      }
    }
  }
}

}  // namespace

// Found by PackRecords<PackedQ5_KRecord> (argument-dependent lookup).
void PutLane(const uint8_t* bytes, int64_t lane, PackedQ5_KRecord& record) {
  const auto& block = *reinterpret_cast<const BlockQ5_K*>(bytes);
  DecodedBlock decoded;
  DecodeQ5_K(&block, &decoded);  // q: 0..31
  PutScalesMinsAndNibbles(block, decoded, lane, record);
  for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
    const int8_t* q = decoded.q + 32 * chunk;
    PutChunkBitPlane([q](int v) { return (q[v] >> 4) & 1; }, lane, record.chunks[chunk].fifth_bits);
  }
}

TypeTraits Q5_KEntry() {
  return WithQ8KActivations(IntegerType<GgmlType::kQ5_K>(
      32, DecodeQ5_K, QuantizeRowQ5_K, NibbleForm<PackedQ5_KRecord>(GgmlType::kQ5_K)));
}

}  // namespace vllm::kernels
