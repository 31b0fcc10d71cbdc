// Packing the K-quant weights (Q2_K ... Q6_K) into the records of packed_nibble_layout.h (any CPU
// can pack; cpu/linear_packed_kquants_avx512.cc computes).
// Quants come from the type's decoder (decode_blocks.cc), so the packed codes mean exactly what the
// blocks do.
#include "kernels/decode_blocks.h"
#include "kernels/packed_nibble_layout.h"

namespace vllm::kernels {
namespace {

// The low 4 bits of a chunk's 32 codes in Q4_0's order: byte j = code j | code j + 16 << 4.
void StoreLowNibbles(const int8_t* codes, int64_t lane, uint8_t* nibbles) {
  uint8_t q4_0_order[16];
  for (int j = 0; j < 16; ++j) {
    q4_0_order[j] = static_cast<uint8_t>((codes[j] & 0x0f) | ((codes[j + 16] & 0x0f) << 4));
  }
  PutChunkNibbles(q4_0_order, lane, nibbles);
}

// Q4_K and Q5_K share their leading fields (d, dmin, 12 bytes of scales and mins).
template <typename Block, typename Record>
void PutScalesMinsAndNibbles(const Block& block, const DecodedBlock& decoded, int64_t lane,
                             Record& record) {
  record.d[lane] = block.d;
  record.dmin[lane] = block.dmin;
  for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
    UnpackScaleMinK4(chunk, block.scales, &record.scales[chunk][lane],
                     &record.min_pairs[chunk / 2][2 * lane + chunk % 2]);
    StoreLowNibbles(decoded.q + 32 * chunk, lane, record.chunks[chunk].nibbles);
  }
}

}  // namespace

void PutLane(const uint8_t* bytes, int64_t lane, PackedQ4_KRecord& record) {
  const auto& block = *reinterpret_cast<const BlockQ4_K*>(bytes);
  DecodedBlock decoded;
  DecodeQ4_K(&block, &decoded);  // q: 0..15
  PutScalesMinsAndNibbles(block, decoded, lane, record);
}

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

void PutLane(const uint8_t* bytes, int64_t lane, PackedQ6_KRecord& record) {
  const auto& block = *reinterpret_cast<const BlockQ6_K*>(bytes);
  DecodedBlock decoded;
  DecodeQ6_K(&block, &decoded);  // q - 32: -32..31
  int8_t codes[kSuperBlockSize];
  for (int i = 0; i < kSuperBlockSize; ++i) codes[i] = static_cast<int8_t>(decoded.q[i] + 32);
  record.d[lane] = block.d;
  for (int s = 0; s < 2 * kChunksPerSuperBlock; ++s) record.scales[s][lane] = block.scales[s];
  for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
    const int8_t* q = codes + 32 * chunk;
    StoreLowNibbles(q, lane, record.chunks[chunk].nibbles);
    PutChunkCrumbs([q](int v) { return q[v] >> 4; }, lane, record.chunks[chunk].high_crumbs);
  }
}

void PutLane(const uint8_t* bytes, int64_t lane, PackedQ3_KRecord& record) {
  const auto& block = *reinterpret_cast<const BlockQ3_K*>(bytes);
  DecodedBlock decoded;
  DecodeQ3_K(&block, &decoded);  // q - 4: -4..3
  record.d[lane] = block.d;
  for (int s = 0; s < 2 * kChunksPerSuperBlock; ++s) {
    record.scales[s][lane] = static_cast<int8_t>(Q3_KScale(block.scales, s));
  }
  for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
    const int8_t* q = decoded.q + 32 * chunk;
    PackedQ3_KChunk& codes = record.chunks[chunk];
    PutChunkCrumbs([q](int v) { return (q[v] + 4) & 3; }, lane, codes.low_crumbs);
    PutChunkBitPlane([q](int v) { return (q[v] + 4) >> 2; }, lane, codes.third_bits);
  }
}

void PutLane(const uint8_t* bytes, int64_t lane, PackedQ2_KRecord& record) {
  const auto& block = *reinterpret_cast<const BlockQ2_K*>(bytes);
  DecodedBlock decoded;
  DecodeQ2_K(&block, &decoded);  // q: 0..3
  record.d[lane] = block.d;
  record.dmin[lane] = block.dmin;
  for (int s = 0; s < 2 * kChunksPerSuperBlock; ++s) {
    record.scale_min_pairs[s / 2][2 * lane + s % 2] = block.scales[s];
  }
  for (int chunk = 0; chunk < kChunksPerSuperBlock; ++chunk) {
    const int8_t* q = decoded.q + 32 * chunk;
    PutChunkCrumbs([q](int v) { return q[v]; }, lane, record.chunks[chunk].low_crumbs);
  }
}

}  // namespace vllm::kernels
