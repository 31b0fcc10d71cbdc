// Reference quantizers of the 32-value block types: Q4_1 / Q5_1 (scale and offset from the block's
// min and max), Q5_0 (scale from the largest magnitude), IQ4_NL (the best scale on the non-linear
// grid) and MXFP4 (a power-of-two scale with the nearest E2M1 value per element).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "common/half.h"
#include "kernels/quant_blocks.h"
#include "kernels/quantizers.h"

namespace vllm::kernels {
namespace {

// 1 / d, or 0 where d is 0 or so small that its inverse overflows.
float InverseOrZero(float d) {
  const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  return std::isfinite(inverse) ? inverse : 0.0f;
}

// 32 levels as 16 bytes of nibbles: the low 4 bits of level j in byte j's low nibble, those of
// level j + 16 in its high nibble.
void PackNibbles(const uint8_t* levels, uint8_t* qs) {
  for (int j = 0; j < kQuantBlockSize / 2; ++j) {
    qs[j] = static_cast<uint8_t>((levels[j] & 0x0f) | ((levels[j + 16] & 0x0f) << 4));
  }
}

// The 5th bit of 32 levels (0..31) as 4 bytes: level j's in bit j % 8 of byte j / 8.
void PackFifthBits(const uint8_t* levels, uint8_t* qh) {
  std::memset(qh, 0, kQuantBlockSize / 8);
  for (int j = 0; j < kQuantBlockSize; ++j) {
    qh[j / 8] |= static_cast<uint8_t>((levels[j] >> 4) << (j % 8));
  }
}

// Q4_1 / Q5_1: x ≈ d * level + m with m the block's min and d = (max - min) / max_level; the
// level is (x - min) / d rounded half up. Writes d and m as fp16.
void QuantizeMinMaxBlock(const float* x, int max_level, uint16_t* d_bits, uint16_t* m_bits,
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

// The index of the kIq4NlValues entry nearest to v (the larger one on ties).
int NearestIq4NlIndex(float v) {
  if (!(v > kIq4NlValues[0])) return 0;
  if (v >= kIq4NlValues[15]) return 15;
  const int upper =
      static_cast<int>(std::upper_bound(kIq4NlValues + 1, kIq4NlValues + 15, v) - kIq4NlValues);
  return v - kIq4NlValues[upper - 1] < kIq4NlValues[upper] - v ? upper - 1 : upper;
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

}  // namespace

namespace internal {

float BestIq4NlScale(const float* x) {
  const float largest = LargestMagnitude(x, kQuantBlockSize);
  if (std::fabs(largest) < kNegligibleMagnitude) return 0.0f;
  // Σ w q x and Σ w q² (w = x², q the grid value nearest to inverse_scale * x): the least-squares
  // scale is their ratio and it removes sum_qx² / sum_q2 from the weighted error.
  auto weighted_sums = [x](float inverse_scale, float* sum_qx, float* sum_q2) {
    *sum_qx = 0.0f;
    *sum_q2 = 0.0f;
    for (int j = 0; j < kQuantBlockSize; ++j) {
      const float q = kIq4NlValues[NearestIq4NlIndex(inverse_scale * x[j])];
      const float weight = x[j] * x[j];
      *sum_qx += weight * q * x[j];
      *sum_q2 += weight * q * q;
    }
  };
  float sum_qx, sum_q2;
  weighted_sums(1.0f / (-largest / kIq4NlValues[0]), &sum_qx, &sum_q2);
  float scale = sum_q2 > 0.0f ? sum_qx / sum_q2 : 0.0f;
  float best_reduction = scale * sum_qx;
  // Candidates map the largest value to the grid's negative end, shifted by -7..7 grid units.
  for (int shift = -7; shift <= 7; ++shift) {
    weighted_sums(static_cast<float>(shift + kIq4NlValues[0]) / largest, &sum_qx, &sum_q2);
    if (sum_q2 > 0.0f && sum_qx * sum_qx > best_reduction * sum_q2) {
      scale = sum_qx / sum_q2;
      best_reduction = scale * sum_qx;
    }
  }
  return scale;
}

void QuantizeIq4NlIndices(const float* x, float inverse_scale, uint8_t* qs) {
  uint8_t indices[kQuantBlockSize];
  for (int j = 0; j < kQuantBlockSize; ++j) {
    indices[j] = static_cast<uint8_t>(NearestIq4NlIndex(inverse_scale * x[j]));
  }
  PackNibbles(indices, qs);
}

}  // namespace internal

// ggml's quantize_row_q4_1_ref.
void QuantizeRowQ4_1(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockQ4_1*>(out);
  uint8_t levels[kQuantBlockSize];
  for (int64_t b = 0; b < n / kQuantBlockSize; ++b) {
    QuantizeMinMaxBlock(x + b * kQuantBlockSize, 15, &blocks[b].d, &blocks[b].m, levels);
    PackNibbles(levels, blocks[b].qs);
  }
}

// Q4_Z (not a ggml type): the block's range widened to hold 0, d = range / 15, the zero point z
// = −min / d rounded, so that 0 is a level, and each level x / d + z rounded into 0..15.
void QuantizeRowQ4_Z(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockQ4_Z*>(out);
  for (int64_t b = 0; b < n / kQuantBlockSize; ++b) {
    const float* values = x + b * kQuantBlockSize;
    float min = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < kQuantBlockSize; ++j) {
      min = std::min(min, values[j]);
      max = std::max(max, values[j]);
    }
    blocks[b].d = Fp32ToFp16((max - min) / 15.0f);
    const float inverse_d = InverseOrZero(Fp16ToFp32(blocks[b].d));
    const int zero = std::clamp(internal::RoundToInt(-min * inverse_d), 0, 15);
    blocks[b].z = static_cast<uint16_t>(zero);
    uint8_t levels[kQuantBlockSize];
    for (int j = 0; j < kQuantBlockSize; ++j) {
      levels[j] = static_cast<uint8_t>(
          std::clamp(internal::RoundToInt(values[j] * inverse_d) + zero, 0, 15));
    }
    PackNibbles(levels, blocks[b].qs);
  }
}

// ggml's quantize_row_q5_1_ref.
void QuantizeRowQ5_1(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockQ5_1*>(out);
  uint8_t levels[kQuantBlockSize];
  for (int64_t b = 0; b < n / kQuantBlockSize; ++b) {
    QuantizeMinMaxBlock(x + b * kQuantBlockSize, 31, &blocks[b].d, &blocks[b].m, levels);
    PackNibbles(levels, blocks[b].qs);
    PackFifthBits(levels, blocks[b].qh);
  }
}

// ggml's quantize_row_q5_0_ref: d = (value of largest magnitude) / -16, so that value maps to
// level 0 exactly; level = x / d + 16 rounded half up, at most 31.
void QuantizeRowQ5_0(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockQ5_0*>(out);
  uint8_t levels[kQuantBlockSize];
  for (int64_t b = 0; b < n / kQuantBlockSize; ++b) {
    const float* block_x = x + b * kQuantBlockSize;
    const float d = internal::LargestMagnitude(block_x, kQuantBlockSize) / -16.0f;
    const float inverse_d = InverseOrZero(d);
    blocks[b].d = Fp32ToFp16(d);
    for (int j = 0; j < kQuantBlockSize; ++j) {
      levels[j] =
          static_cast<uint8_t>(std::min(31, static_cast<int>(block_x[j] * inverse_d + 16.5f)));
    }
    PackNibbles(levels, blocks[b].qs);
    PackFifthBits(levels, blocks[b].qh);
  }
}

// ggml's quantize_iq4_nl without an importance matrix: the best grid scale per block, then each
// value's nearest grid entry at that scale.
void QuantizeRowIq4Nl(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockIq4Nl*>(out);
  for (int64_t b = 0; b < n / kQuantBlockSize; ++b) {
    const float* block_x = x + b * kQuantBlockSize;
    const float scale = internal::BestIq4NlScale(block_x);
    blocks[b].d = Fp32ToFp16(scale);
    internal::QuantizeIq4NlIndices(block_x, scale != 0.0f ? 1.0f / scale : 0.0f, blocks[b].qs);
  }
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

}  // namespace vllm::kernels
