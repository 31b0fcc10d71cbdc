// IEEE fp16 and bfloat16 <-> fp32 conversions (scalar; SIMD paths live in kernels/cpu).
#pragma once

#include <cstdint>
#include <cstring>

namespace vllm {

inline float Fp32FromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

inline uint32_t BitsFromFp32(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

inline float Bf16ToFp32(uint16_t bf16) { return Fp32FromBits(static_cast<uint32_t>(bf16) << 16); }

// Round to nearest even; NaN stays a (quiet) NaN.
inline uint16_t Fp32ToBf16(float value) {
  uint32_t bits = BitsFromFp32(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline float Fp16ToFp32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    if (mantissa == 0) return Fp32FromBits(sign);
    // Subnormal: value = mantissa * 2^-24.
    float value = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -value : value;
  }
  if (exponent == 31) return Fp32FromBits(sign | 0x7f800000u | (mantissa << 13));
  return Fp32FromBits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// Round to nearest even, overflow to infinity.
inline uint16_t Fp32ToFp16(float value) {
  uint32_t bits = BitsFromFp32(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits > 0x7f800000u) return sign | 0x7e00u;  // NaN
  if (abs_bits >= 0x477ff000u) return sign | 0x7c00u;  // overflow (>= 65520) -> inf
  if (abs_bits < 0x38800000u) {                         // below the smallest normal: subnormal
    float abs_value = Fp32FromBits(abs_bits);
    // Adding 0.5 (2^-1) aligns the fp16 subnormal grid (2^-24) with the fp32 mantissa's last bit.
    uint32_t rounded = BitsFromFp32(abs_value + 0.5f) - 0x3f000000u;
    return sign | static_cast<uint16_t>(rounded);
  }
  uint32_t mantissa_odd = (abs_bits >> 13) & 1u;
  abs_bits += 0xc8000fffu + mantissa_odd;  // rebias exponent (-112 << 23) and round to nearest even
  return sign | static_cast<uint16_t>(abs_bits >> 13);
}

}  // namespace vllm
