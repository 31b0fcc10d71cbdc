// Internal to kernels: the code the 32-value nibble block types share (Q4_0, Q4_1, Q4_Z, Q5_0,
// Q5_1, Q8_0's scale, IQ4_NL, MXFP4 and IQ4_XS's sub-blocks): 16 bytes of nibbles in Q4_0's order
// (byte j: value j in the low nibble, value j + 16 in the high one), Q5's 5th bits, their decoding,
// quantizing and packing. Each type's own code is in its file in types/.
#pragma once

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "common/half.h"
#include "kernels/packed_nibble_layout.h"
#include "kernels/quant_blocks.h"

namespace vllm::kernels {

// Decoding (DecodedBlock).

// The two nibbles of 16 bytes: element j from byte j's low nibble, element j + 16 from its high.
inline void SplitNibbles(const uint8_t* __restrict bytes, int8_t* __restrict q) {
  for (int j = 0; j < 16; ++j) {
    q[j] = static_cast<int8_t>(bytes[j] & 0x0f);
    q[j + 16] = static_cast<int8_t>(bytes[j] >> 4);
  }
}

// For each byte value b, 8 bytes whose byte k is 16 when bit k of b is set (little-endian word).
inline constexpr std::array<uint64_t, 256> kFifthBitBytes = [] {
  std::array<uint64_t, 256> table{};
  for (int b = 0; b < 256; ++b) {
    for (int k = 0; k < 8; ++k) {
      if ((b >> k) & 1) table[b] |= uint64_t{16} << (8 * k);
    }
  }
  return table;
}();

// Adds Q5's 5th bit (bit j of qh: element j) as 16 to each of the 32 values, 8 at a time.
inline void AddFifthBits(const uint8_t qh_bytes[4], int8_t* q) {
  for (int i = 0; i < 4; ++i) {
    uint64_t values;
    std::memcpy(&values, q + 8 * i, sizeof(values));
    values |= kFifthBitBytes[qh_bytes[i]];
    std::memcpy(q + 8 * i, &values, sizeof(values));
  }
}

// Maps 32 nibble indices through a 16-entry grid.
inline void MapThroughGrid(const int8_t grid[16], int8_t* q) {
  for (int j = 0; j < 32; ++j) q[j] = grid[q[j]];
}

// One scale d and no min for each of the block's sub-blocks.
inline void SetScale(float d, int num_sub_blocks, DecodedBlock* out) {
  for (int s = 0; s < num_sub_blocks; ++s) {
    out->scale[s] = d;
    out->min[s] = 0.0f;
  }
}

// Quantizing.

// 1 / d, or 0 where d is 0 or so small that its inverse overflows.
inline float InverseOrZero(float d) {
  const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  return std::isfinite(inverse) ? inverse : 0.0f;
}

// 32 levels as 16 bytes of nibbles: the low 4 bits of level j in byte j's low nibble, those of
// level j + 16 in its high nibble.
inline void PackNibbles(const uint8_t* levels, uint8_t* qs) {
  for (int j = 0; j < kQuantBlockSize / 2; ++j) {
    qs[j] = static_cast<uint8_t>((levels[j] & 0x0f) | ((levels[j + 16] & 0x0f) << 4));
  }
}

// The 5th bit of 32 levels (0..31) as 4 bytes: level j's in bit j % 8 of byte j / 8.
inline void PackFifthBits(const uint8_t* levels, uint8_t* qh) {
  std::memset(qh, 0, kQuantBlockSize / 8);
  for (int j = 0; j < kQuantBlockSize; ++j) {
    qh[j / 8] |= static_cast<uint8_t>((levels[j] >> 4) << (j % 8));
  }
}

// Q4_1 / Q5_1: x ≈ d * level + m with m the block's min and d = (max - min) / max_level; the
// level is (x - min) / d rounded half up. Writes d and m as fp16.
inline void QuantizeMinMaxBlock(const float* x, int max_level, uint16_t* d_bits, uint16_t* m_bits,
                                uint8_t* levels) {
  float min = FLT_MAX;
  float max = -FLT_MAX;
  for (int j = 0; j < kQuantBlockSize; ++j) {
    min = std::min(min, x[j]);
    max = std::max(max, x[j]);
  }
  const float d = (max - min) / static_cast<float>(max_level);
  const float inverse_d = InverseOrZero(d);
  *d_bits = Fp32ToFp16(d);
  *m_bits = Fp32ToFp16(min);
  for (int j = 0; j < kQuantBlockSize; ++j) {
    levels[j] = static_cast<uint8_t>(
        std::min(max_level, static_cast<int>((x[j] - min) * inverse_d + 0.5f)));
  }
}

// Packing (packed_nibble_layout.h). Their blocks already hold 4-bit codes in Q4_0's order, so the
// nibbles are copied as they are; only the scales change form.

// Q5_0 / Q5_1: nibbles and 5th bits (as a plane), after the scale (and min) the caller stores.
template <typename Block>
void PutFifthBitCodes(const Block& block, int64_t lane, PackedQ5_KChunk& codes) {
  PutChunkNibbles(block.qs, lane, codes.nibbles);
  PutChunkBitPlane([&block](int v) { return (block.qh[v / 8] >> (v % 8)) & 1; }, lane,
                   codes.fifth_bits);
}

// IQ4_NL, and Q4_0, whose blocks are laid out alike (fp16 d, 16 bytes of nibbles) and pack into
// the same record; only the kernels' grid differs.
inline void PutLane(const uint8_t* bytes, int64_t lane, PackedIq4NlRecord& record) {
  static_assert(sizeof(BlockQ4_0) == sizeof(BlockIq4Nl));
  const auto& block = *reinterpret_cast<const BlockIq4Nl*>(bytes);
  record.d[lane] = block.d;
  PutChunkNibbles(block.qs, lane, record.nibbles);
}

}  // namespace vllm::kernels
