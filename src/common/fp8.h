// FP8 e4m3fn (PyTorch's float8_e4m3fn, safetensors' F8_E4M3) <-> fp32, scalar. A byte is a sign,
// 4 exponent bits with bias 7 and 3 mantissa bits; there are no infinities, 0x7f and 0xff are NaN,
// and the largest finite magnitude is 448. (The attention kernels keep an ISA-private copy of the
// decoder: see kernels/cpu/attention_tile_impl.h.)
#pragma once

#include <cmath>
#include <cstdint>

#include "common/half.h"

namespace vllm {

inline constexpr float kFp8E4m3Max = 448.0f;

inline bool IsFp8E4m3Nan(uint8_t code) { return (code & 0x7fu) == 0x7fu; }

// A byte as f32, exactly. NaN codes (IsFp8E4m3Nan) decode as ±480: callers reject them first.
inline float DecodeFp8E4m3(uint8_t code) {
  const uint32_t magnitude = code & 0x7fu;
  // Normal: exponent field e in [1, 15] with bias 7 → f32 exponent field e + 120.
  const float normal = Fp32FromBits((magnitude << 20) + (120u << 23));
  const float subnormal = static_cast<float>(magnitude & 7u) * 0.001953125f;  // m · 2^-9
  const float value = (magnitude >> 3) != 0 ? normal : subnormal;
  return (code & 0x80u) != 0 ? -value : value;
}

// The nearest byte (ties to even), saturating: |x| beyond 448 (infinities and NaN included)
// becomes ±448.
inline uint8_t EncodeFp8E4m3(float x) {
  const auto sign = static_cast<uint8_t>((BitsFromFp32(x) >> 24) & 0x80u);
  const float magnitude = std::fabs(x);
  if (magnitude < 0.015625f) {  // below 2^-6, the smallest normal: multiples of 2^-9
    // 0..8, and 8 is the encoding of 2^-6 itself.
    return sign | static_cast<uint8_t>(std::nearbyint(magnitude * 512.0f));
  }
  uint32_t bits = BitsFromFp32(magnitude);
  bits += 0x7ffffu + ((bits >> 20) & 1u);  // round to 3 mantissa bits, ties to even
  uint32_t code = (((bits >> 23) - 120u) << 3) | ((bits >> 20) & 7u);
  if (code > 0x7eu) code = 0x7eu;  // 448, the largest finite value
  return sign | static_cast<uint8_t>(code);
}

}  // namespace vllm
