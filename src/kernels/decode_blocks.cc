// Block decoders for every integer type, written from ggml's block layouts (see quant_blocks.h).
// Each sets q, and per sub-block the f32 scale and min, with the same f32 arithmetic as ggml's
// dequantizer (e.g. Q6_K's scale is d * sc rounded to f32 before it multiplies q).
#include "kernels/decode_blocks.h"

#include <array>
#include <cstring>

#include "common/half.h"
#include "kernels/quant_blocks.h"

namespace vllm::kernels {
namespace {

// The two nibbles of 16 bytes: element j from byte j's low nibble, element j + 16 from its high.
void SplitNibbles(const uint8_t* __restrict bytes, int8_t* __restrict q) {
  for (int j = 0; j < 16; ++j) {
    q[j] = static_cast<int8_t>(bytes[j] & 0x0f);
    q[j + 16] = static_cast<int8_t>(bytes[j] >> 4);
  }
}

// For each byte value b, 8 bytes whose byte k is 16 when bit k of b is set (little-endian word).
constexpr std::array<uint64_t, 256> kFifthBitBytes = [] {
  std::array<uint64_t, 256> table{};
  for (int b = 0; b < 256; ++b) {
    for (int k = 0; k < 8; ++k) {
      if ((b >> k) & 1) table[b] |= uint64_t{16} << (8 * k);
    }
  }
  return table;
}();

// Adds Q5's 5th bit (bit j of qh: element j) as 16 to each of the 32 values, 8 at a time.
void AddFifthBits(const uint8_t qh_bytes[4], int8_t* q) {
  for (int i = 0; i < 4; ++i) {
    uint64_t values;
    std::memcpy(&values, q + 8 * i, sizeof(values));
    values |= kFifthBitBytes[qh_bytes[i]];
    std::memcpy(q + 8 * i, &values, sizeof(values));
  }
}

// Maps 32 nibble indices through a 16-entry grid.
void MapThroughGrid(const int8_t grid[16], int8_t* q) {
  for (int j = 0; j < 32; ++j) q[j] = grid[q[j]];
}

// Q2_K / Q3_K low 2 bits: byte l of a 128-value half holds elements l, l+32, l+64, l+96 of it
// (in bits 0-1, 2-3, 4-5, 6-7).
void SplitCrumbs(const uint8_t* __restrict qs, int8_t* __restrict q) {
  for (int half = 0; half < 2; ++half) {
    for (int shift = 0; shift < 4; ++shift) {
      for (int l = 0; l < 32; ++l) {
        q[half * 128 + shift * 32 + l] =
            static_cast<int8_t>((qs[half * 32 + l] >> (2 * shift)) & 3);
      }
    }
  }
}

// Q4_K / Q5_K: nibbles of 64-value chunk c: element l from byte l's low nibble, l + 32 from high.
void SplitChunkNibbles(const uint8_t* __restrict qs, int8_t* __restrict q) {
  for (int chunk = 0; chunk < 4; ++chunk) {
    for (int l = 0; l < 32; ++l) {
      q[chunk * 64 + l] = static_cast<int8_t>(qs[chunk * 32 + l] & 0x0f);
      q[chunk * 64 + l + 32] = static_cast<int8_t>(qs[chunk * 32 + l] >> 4);
    }
  }
}

// Q4_K / Q5_K scales and mins: d * sc and dmin * mn per sub-block of 32.
void KQuantScalesAndMins(uint16_t d_bits, uint16_t dmin_bits, const uint8_t* packed,
                         DecodedBlock* out) {
  const float d = Fp16ToFp32(d_bits);
  const float dmin = Fp16ToFp32(dmin_bits);
  for (int s = 0; s < 8; ++s) {
    uint8_t scale, min;
    UnpackScaleMinK4(s, packed, &scale, &min);
    out->scale[s] = d * scale;
    out->min[s] = dmin * min;
  }
}

void SetScale(float d, int num_sub_blocks, DecodedBlock* out) {
  for (int s = 0; s < num_sub_blocks; ++s) {
    out->scale[s] = d;
    out->min[s] = 0.0f;
  }
}

// Q6_K's 6-bit values of one 128-value half, minus 32: ql bytes [0, 64) give the low nibbles of
// values [0, 64) (low) and [64, 128) (high); qh byte l gives the 2 high bits of values l, l + 32,
// l + 64, l + 96.
void SplitQ6_KHalf(const uint8_t* __restrict ql, const uint8_t* __restrict qh,
                   int8_t* __restrict q) {
  for (int l = 0; l < 32; ++l) {
    q[l] = static_cast<int8_t>(((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32);
    q[l + 32] = static_cast<int8_t>(((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32);
    q[l + 64] = static_cast<int8_t>(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
    q[l + 96] = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
  }
}

}  // namespace

void DecodeQ4_0(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ4_0*>(block);
  SplitNibbles(b.qs, out->q);
  for (int j = 0; j < 32; ++j) out->q[j] = static_cast<int8_t>(out->q[j] - 8);
  SetScale(Fp16ToFp32(b.d), 1, out);
}

void DecodeQ4_1(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ4_1*>(block);
  SplitNibbles(b.qs, out->q);
  out->scale[0] = Fp16ToFp32(b.d);
  out->min[0] = -Fp16ToFp32(b.m);
}

void DecodeQ4_Z(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ4_Z*>(block);
  SplitNibbles(b.qs, out->q);
  const int zero = b.z & kQ4ZeroPointMask;
  for (int j = 0; j < 32; ++j) out->q[j] = static_cast<int8_t>(out->q[j] - zero);
  SetScale(Fp16ToFp32(b.d), 1, out);
}

void DecodeQ5_0(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ5_0*>(block);
  SplitNibbles(b.qs, out->q);
  AddFifthBits(b.qh, out->q);
  for (int j = 0; j < 32; ++j) out->q[j] = static_cast<int8_t>(out->q[j] - 16);
  SetScale(Fp16ToFp32(b.d), 1, out);
}

void DecodeQ5_1(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ5_1*>(block);
  SplitNibbles(b.qs, out->q);
  AddFifthBits(b.qh, out->q);
  out->scale[0] = Fp16ToFp32(b.d);
  out->min[0] = -Fp16ToFp32(b.m);
}

void DecodeQ8_0(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ8_0*>(block);
  std::memcpy(out->q, b.qs, 32);
  SetScale(Fp16ToFp32(b.d), 1, out);
}

void DecodeQ2_K(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ2_K*>(block);
  SplitCrumbs(b.qs, out->q);
  const float d = Fp16ToFp32(b.d);
  const float dmin = Fp16ToFp32(b.dmin);
  for (int s = 0; s < 16; ++s) {
    out->scale[s] = d * (b.scales[s] & 0x0f);
    out->min[s] = dmin * (b.scales[s] >> 4);
  }
}

void DecodeQ3_K(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ3_K*>(block);
  SplitCrumbs(b.qs, out->q);
  // The high bit: bit k of hmask byte l belongs to element 32 k + l; a clear bit subtracts 4
  // (without a branch: the bits are random, and a branch per value made the in-place kernels three
  // times slower).
  for (int k = 0; k < 8; ++k) {
    for (int l = 0; l < 32; ++l) {
      const int high = (b.hmask[l] >> k) & 1;
      out->q[32 * k + l] = static_cast<int8_t>(out->q[32 * k + l] - 4 + 4 * high);
    }
  }
  const float d = Fp16ToFp32(b.d);
  for (int s = 0; s < 16; ++s) {
    out->scale[s] = d * Q3_KScale(b.scales, s);
    out->min[s] = 0.0f;
  }
}

void DecodeQ4_K(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ4_K*>(block);
  SplitChunkNibbles(b.qs, out->q);
  KQuantScalesAndMins(b.d, b.dmin, b.scales, out);
}

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

void DecodeQ6_K(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ6_K*>(block);
  SplitQ6_KHalf(b.ql, b.qh, out->q);
  SplitQ6_KHalf(b.ql + 64, b.qh + 32, out->q + 128);
  const float d = Fp16ToFp32(b.d);
  for (int s = 0; s < 16; ++s) {
    out->scale[s] = d * b.scales[s];
    out->min[s] = 0.0f;
  }
}

void DecodeIq4Nl(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockIq4Nl*>(block);
  SplitNibbles(b.qs, out->q);
  MapThroughGrid(kIq4NlValues, out->q);
  SetScale(Fp16ToFp32(b.d), 1, out);
}

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

void DecodeMxfp4(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockMxfp4*>(block);
  SplitNibbles(b.qs, out->q);
  MapThroughGrid(kMxfp4Values, out->q);
  SetScale(E8m0ToFp32Half(b.e), 1, out);
}

void DequantizeDecodedRow(const TypeTraits& traits, const void* row, int64_t n, float* out) {
  const int64_t block_size = traits.layout.block_size;
  const int64_t sub_size = traits.sub_block_size;
  const auto* bytes = static_cast<const uint8_t*>(row);
  DecodedBlock decoded;
  for (int64_t b = 0; b < n / block_size; ++b) {
    traits.decode(bytes + b * traits.layout.block_bytes, &decoded);
    float* values = out + b * block_size;
    for (int64_t i = 0; i < block_size; ++i) {
      const int64_t s = i / sub_size;
      // scale * q is exact for every type with a min, and min is ±0 for the others, so fused or
      // not this rounds as ggml's dequantizer does, bit for bit (signed zeros included).
      values[i] = decoded.scale[s] * static_cast<float>(decoded.q[i]) - decoded.min[s];
    }
  }
}

}  // namespace vllm::kernels
