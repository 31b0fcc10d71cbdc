// The block structs of the quantized GGUF types, byte for byte as ggml lays them out
// (ggml-common.h). A row of `n` values is n / block size consecutive blocks. fp16 fields are raw
// IEEE half bits; E8M0 is a bare exponent byte.
//
// Values per element (q: the stored unsigned field; d, m: fp16 scales; sc, mn: sub-block scales):
//   Q4_0   d (q - 8)                 Q4_1  d q + m            Q8_0  d q (q signed)
//   Q5_0   d (q - 16), q 5-bit       Q5_1  d q + m, q 5-bit
//   IQ4_NL d kIq4NlValues[q]         MXFP4 2^(e - 128) kMxfp4Values[q]
//   Q4_Z   d (q - z), z 0..31        (not a ggml type: zero-point checkpoints as they load)
//   F8_E4M3_B32  d e4m3(q), d f32    (not a ggml type: FP8 checkpoints as they load)
//   Q2_K   d sc q - dmin mn  (16 sub-blocks of 16; sc, mn 4-bit)
//   Q3_K   d (sc - 32) (q - 4 if its hmask bit is clear, else q)  (16 of 16; sc 6-bit)
//   Q4_K   d sc q - dmin mn  (8 sub-blocks of 32; sc, mn 6-bit, packed in 12 bytes)
//   Q5_K   as Q4_K with a 5th bit in qh
//   Q6_K   d sc (q - 32)     (16 of 16; q 6-bit from ql nibbles + qh 2-bit pairs; sc int8)
//   IQ4_XS d (ls - 32) kIq4NlValues[q]  (8 of 32; ls 6-bit from scales_l / scales_h)
#pragma once

#include <cstdint>

#include "common/ggml_type.h"

namespace vllm::kernels {

struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[16];  // byte j: element j in the low nibble, element j + 16 in the high
};
struct BlockQ4_1 {
  uint16_t d, m;
  uint8_t qs[16];
};
struct BlockQ4_Z {
  uint16_t d;
  uint16_t z;  // the zero point: its low 5 bits (kQ4ZeroPointMask), the rest ignored
  uint8_t qs[16];
};
inline constexpr int kQ4ZeroPointMask = 31;
struct BlockF8_E4M3_B32 {
  float d;            // the scale of the checkpoint's block (per tensor, per row or 128 × 128)
  uint8_t codes[32];  // e4m3fn bytes (common/fp8.h), never a NaN code (the loader refuses them)
};
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];  // bit j: the 5th bit of element j
  uint8_t qs[16];
};
struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[32];
};
struct BlockQ2_K {
  uint8_t scales[16];  // low nibble: scale, high nibble: min, per 16 values
  uint8_t qs[64];      // 2-bit quants: byte l of a 128-value half holds 4 elements 32 apart
  uint16_t d, dmin;
};
struct BlockQ3_K {
  uint8_t hmask[32];   // the high bit: bit j of byte l is element 32 j + l
  uint8_t qs[64];      // low 2 bits, laid out as Q2_K's
  uint8_t scales[12];  // 16 6-bit scales
  uint16_t d;
};
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[12];  // 8 6-bit scales and 8 6-bit mins
  uint8_t qs[128];     // byte l of a 64-value chunk: element l (low nibble), l + 32 (high)
};
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[32];  // bit 2c / 2c+1 of byte l: 5th bit of chunk c's element l / l + 32
  uint8_t qs[128];
};
struct BlockQ6_K {
  uint8_t ql[128];  // low 4 bits
  uint8_t qh[64];   // high 2 bits
  int8_t scales[16];
  uint16_t d;
};
struct BlockIq4Nl {
  uint16_t d;
  uint8_t qs[16];
};
struct BlockIq4Xs {
  uint16_t d;
  uint16_t scales_h;    // 2 high bits of each of the 8 scales
  uint8_t scales_l[4];  // 4 low bits of each scale, two per byte
  uint8_t qs[128];      // 16 bytes per 32 values, nibbles as Q4_0
};
struct BlockMxfp4 {
  uint8_t e;  // E8M0 exponent
  uint8_t qs[16];
};

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ4_Z) == 20 &&
              sizeof(BlockQ5_0) == 22 && sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34 &&
              sizeof(BlockQ2_K) == 84 && sizeof(BlockQ3_K) == 110 && sizeof(BlockQ4_K) == 144 &&
              sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210 && sizeof(BlockIq4Nl) == 18 &&
              sizeof(BlockIq4Xs) == 136 && sizeof(BlockMxfp4) == 17);
static_assert(sizeof(BlockF8_E4M3_B32) == 36);

// The non-linear 4-bit grids: IQ4_NL / IQ4_XS values, and MXFP4's E2M1 values doubled.
inline constexpr int8_t kIq4NlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};
inline constexpr int8_t kMxfp4Values[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                            0, -1, -2, -3, -4, -6, -8, -12};

// 2^(e - 128): half the E8M0 value, matching kMxfp4Values' doubling (subnormal for e < 2).
inline float E8m0ToFp32Half(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
  float value;
  __builtin_memcpy(&value, &bits, sizeof(value));
  return value;
}

// Q4_K / Q5_K: the scale and min of sub-block j (0..7) from the 12 packed bytes.
inline void UnpackScaleMinK4(int j, const uint8_t* packed, uint8_t* scale, uint8_t* min) {
  if (j < 4) {
    *scale = packed[j] & 63;
    *min = packed[j + 4] & 63;
  } else {
    *scale = (packed[j + 4] & 0x0f) | ((packed[j - 4] >> 6) << 4);
    *min = (packed[j + 4] >> 4) | ((packed[j] >> 6) << 4);
  }
}

// Q3_K: the scale of sub-block s (0..15) from its 12 packed bytes (4 low bits, then 2 high bits
// per scale), minus 32: -32..31.
inline int Q3_KScale(const uint8_t* packed, int s) {
  const int low = s < 8 ? packed[s] & 0x0f : packed[s - 8] >> 4;
  const int high = (packed[8 + s % 4] >> (2 * (s / 4))) & 3;
  return (low | (high << 4)) - 32;
}

}  // namespace vllm::kernels
