// Packing Q4_0 / Q4_1 / Q4_Z / Q5_0 / Q5_1 / IQ4_NL / IQ4_XS / MXFP4 weights into the records of
// packed_nibble_layout.h (any CPU can pack; cpu/linear_packed_iq4_avx512.cc computes, or for the
// grid types cpu/linear_packed_grid_vbmi_avx512.cc where the CPU has AVX512_VBMI). Their blocks
// already hold 4-bit codes in Q4_0's order, so the nibbles are copied as they are; only the scales
// change form (Q5_0's 5th bits become a plane, Q4_Z's zero point a bias byte). Q4_0's blocks are
// laid out as IQ4_NL's (fp16 d, 16 bytes of nibbles) and pack into the same record; only the
// kernel's grid differs.
#include "kernels/packed_nibble_layout.h"

namespace vllm::kernels {
namespace {

// Q5_0 / Q5_1: nibbles and 5th bits, after the scale (and min) the caller stores.
template <typename Block>
void PutFifthBitCodes(const Block& block, int64_t lane, PackedQ5_KChunk& codes) {
  PutChunkNibbles(block.qs, lane, codes.nibbles);
  PutChunkBitPlane([&block](int v) { return (block.qh[v / 8] >> (v % 8)) & 1; }, lane,
                   codes.fifth_bits);
}

}  // namespace

void PutLane(const uint8_t* bytes, int64_t lane, PackedIq4NlRecord& record) {
  static_assert(sizeof(BlockQ4_0) == sizeof(BlockIq4Nl));  // Q4_0 packs as IQ4_NL
  const auto& block = *reinterpret_cast<const BlockIq4Nl*>(bytes);
  record.d[lane] = block.d;
  PutChunkNibbles(block.qs, lane, record.nibbles);
}

void PutLane(const uint8_t* bytes, int64_t lane, PackedQ4_1Record& record) {
  const auto& block = *reinterpret_cast<const BlockQ4_1*>(bytes);
  record.d[lane] = block.d;
  record.m[lane] = block.m;
  PutChunkNibbles(block.qs, lane, record.nibbles);
}

void PutLane(const uint8_t* bytes, int64_t lane, PackedQ4_ZRecord& record) {
  const auto& block = *reinterpret_cast<const BlockQ4_Z*>(bytes);
  record.d[lane] = block.d;
  record.biases[lane] = static_cast<uint8_t>(32 - (block.z & kQ4ZeroPointMask));
  PutChunkNibbles(block.qs, lane, record.nibbles);
}

void PutLane(const uint8_t* bytes, int64_t lane, PackedQ5_0Record& record) {
  const auto& block = *reinterpret_cast<const BlockQ5_0*>(bytes);
  record.d[lane] = block.d;
  PutFifthBitCodes(block, lane, record.codes);
}

void PutLane(const uint8_t* bytes, int64_t lane, PackedQ5_1Record& record) {
  const auto& block = *reinterpret_cast<const BlockQ5_1*>(bytes);
  record.d[lane] = block.d;
  record.m[lane] = block.m;
  PutFifthBitCodes(block, lane, record.codes);
}

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

void PutLane(const uint8_t* bytes, int64_t lane, PackedMxfp4Record& record) {
  const auto& block = *reinterpret_cast<const BlockMxfp4*>(bytes);
  record.e[lane] = block.e;
  PutChunkNibbles(block.qs, lane, record.nibbles);
}

}  // namespace vllm::kernels
