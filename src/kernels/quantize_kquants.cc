// Reference quantizers of the 256-value super-block types: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and
// IQ4_XS, as ggml's reference quantizers (no importance matrix). Each sub-block first gets its own
// scale (and min) from a weighted least-squares search over candidate scales; the sub-block scales
// are then quantized against one fp16 super-block scale, and the values re-quantized with the
// scales as stored.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/half.h"
#include "kernels/quant_blocks.h"
#include "kernels/quantizers.h"

namespace vllm::kernels {
namespace {

using internal::kNegligibleMagnitude;
using internal::LargestMagnitude;
using internal::RoundToInt;

// Sub-blocks per super-block: of 16 values (Q2_K, Q3_K, Q6_K) and of 32 (Q4_K, Q5_K, IQ4_XS).
constexpr int kSubBlocksOf16 = kSuperBlockSize / 16;
constexpr int kSubBlocksOf32 = kSuperBlockSize / 32;
// The most values one scale search sees.
constexpr int kMaxSearchValues = 32;

// Q2_K / Q3_K: 256 levels of 2 bits as 64 bytes; byte l of each 128-value half holds its levels
// l, l + 32, l + 64 and l + 96 in bits 0-1, 2-3, 4-5 and 6-7.
void PackCrumbs(const uint8_t* levels, uint8_t* qs) {
  for (int half = 0; half < 2; ++half) {
    const uint8_t* half_levels = levels + 128 * half;
    for (int l = 0; l < 32; ++l) {
      qs[32 * half + l] =
          static_cast<uint8_t>(half_levels[l] | (half_levels[l + 32] << 2) |
                               (half_levels[l + 64] << 4) | (half_levels[l + 96] << 6));
    }
  }
}

// The candidate inverse scales of SearchScaleAndMin, (max_level + rmin + rdelta * step) / range
// for step = 0..num_steps, and its error measure: weighted |diff| or weighted diff².
struct ScaleMinSearch {
  float rmin;
  float rdelta;
  int num_steps;
  bool absolute_error;
};

// ggml's make_qkx2_quants: x[0..n) ≈ scale * level - min with levels in [0, max_level] and
// min >= 0. Starting from the fit that maps [min(x, 0), max(x)] onto the levels, each candidate
// inverse scale gives levels, whose weighted least-squares scale and min are kept when they lower
// the weighted error. Returns the scale; writes the levels and the min.
float SearchScaleAndMin(const float* x, const float* weights, int n, int max_level,
                        const ScaleMinSearch& search, uint8_t* levels, float* min_out) {
  float min = x[0];
  float max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_w += weights[i];
    sum_x += weights[i] * x[i];
  }
  // x ≈ scale * level + offset, offset <= 0 (the min subtracted).
  float offset = std::min(min, 0.0f);
  if (max == offset) {
    std::fill_n(levels, n, 0);
    *min_out = -offset;
    return 0.0f;
  }
  auto weighted_error = [&](float fit_scale, float fit_offset, const uint8_t* fit_levels) {
    float error = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float diff = fit_scale * fit_levels[i] + fit_offset - x[i];
      error += weights[i] * (search.absolute_error ? std::fabs(diff) : diff * diff);
    }
    return error;
  };
  auto levels_at = [&](float inverse_scale, int i) {
    return std::clamp(RoundToInt(inverse_scale * (x[i] - offset)), 0, max_level);
  };
  float inverse_scale = max_level / (max - offset);
  float scale = 1.0f / inverse_scale;
  for (int i = 0; i < n; ++i) levels[i] = static_cast<uint8_t>(levels_at(inverse_scale, i));
  float best_error = weighted_error(scale, offset, levels);
  uint8_t candidate[kMaxSearchValues];
  for (int step = 0; step <= search.num_steps; ++step) {
    inverse_scale = (search.rmin + search.rdelta * step + max_level) / (max - offset);
    float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int level = levels_at(inverse_scale, i);
      candidate[i] = static_cast<uint8_t>(level);
      sum_l += weights[i] * level;
      sum_l2 += weights[i] * level * level;
      sum_xl += weights[i] * level * x[i];
    }
    const float determinant = sum_w * sum_l2 - sum_l * sum_l;
    if (!(determinant > 0.0f)) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / determinant;
    float this_offset = (sum_l2 * sum_x - sum_l * sum_xl) / determinant;
    if (this_offset > 0.0f) {  // the min may only be subtracted: refit the scale alone
      this_offset = 0.0f;
      this_scale = sum_xl / sum_l2;
    }
    const float error = weighted_error(this_scale, this_offset, candidate);
    if (error < best_error) {
      std::copy_n(candidate, n, levels);
      best_error = error;
      scale = this_scale;
      offset = this_offset;
    }
  }
  *min_out = -offset;
  return scale;
}

// The weighted sums Σ w x l and Σ w l² (w = x²) of values x and their levels l.
struct LevelSums {
  float sum_xl = 0.0f;
  float sum_l2 = 0.0f;
};

// The sums over x[0..n) for the signed levels l = round(inverse_scale * x) clamped to
// [-half_levels, half_levels - 1], which it writes.
LevelSums FitSymmetricLevels(const float* x, int n, int half_levels, float inverse_scale,
                             int8_t* levels) {
  LevelSums sums;
  for (int i = 0; i < n; ++i) {
    const int level = std::clamp(RoundToInt(inverse_scale * x[i]), -half_levels, half_levels - 1);
    levels[i] = static_cast<int8_t>(level);
    const float weight = x[i] * x[i];
    sums.sum_xl += weight * x[i] * level;
    sums.sum_l2 += weight * level * level;
  }
  return sums;
}

// ggml's make_qx_quants (x²-weighted): x[0..n) ≈ scale * l with l in [-half_levels,
// half_levels - 1]; the least-squares scale of the levels at the best of 19 inverse scales
// -(half_levels + 0.1 k) / (value of largest magnitude), k = -9..9. Writes l + half_levels.
float SearchSymmetricScale(const float* x, int n, int half_levels, uint8_t* levels) {
  const float largest = LargestMagnitude(x, n);
  if (std::fabs(largest) < kNegligibleMagnitude) {
    std::fill_n(levels, n, 0);
    return 0.0f;
  }
  int8_t best_levels[kMaxSearchValues];
  int8_t candidate[kMaxSearchValues];
  LevelSums sums = FitSymmetricLevels(x, n, half_levels, -half_levels / largest, best_levels);
  float scale = sums.sum_l2 != 0.0f ? sums.sum_xl / sums.sum_l2 : 0.0f;
  float best_reduction = scale * sums.sum_xl;  // the weighted squared error it removes
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    const float inverse_scale = -(half_levels + 0.1f * step) / largest;
    sums = FitSymmetricLevels(x, n, half_levels, inverse_scale, candidate);
    if (sums.sum_l2 > 0.0f && sums.sum_xl * sums.sum_xl > best_reduction * sums.sum_l2) {
      std::copy_n(candidate, n, best_levels);
      scale = sums.sum_xl / sums.sum_l2;
      best_reduction = scale * sums.sum_xl;
    }
  }
  for (int i = 0; i < n; ++i) levels[i] = static_cast<uint8_t>(best_levels[i] + half_levels);
  return scale;
}

// ggml's make_q3_quants (x²-weighted, with refinement): x[0..n) ≈ scale * l with l in
// [-half_levels, half_levels - 1]. From the levels at scale (value of largest magnitude) /
// -half_levels, up to 5 passes move single levels to the one the other levels' least-squares fit
// asks for, whenever that lowers the weighted error. Writes l + half_levels.
float SearchQ3Scale(const float* x, int n, int half_levels, uint8_t* levels) {
  const float largest = LargestMagnitude(x, n);
  if (std::fabs(largest) < kNegligibleMagnitude) {
    std::fill_n(levels, n, 0);
    return 0.0f;
  }
  int8_t signed_levels[kMaxSearchValues];
  LevelSums sums = FitSymmetricLevels(x, n, half_levels, -half_levels / largest, signed_levels);
  for (int pass = 0; pass < 5; ++pass) {
    bool changed = false;
    for (int i = 0; i < n; ++i) {
      const float weight = x[i] * x[i];
      // The sums without element i.
      float sum_xl = sums.sum_xl - weight * x[i] * signed_levels[i];
      if (!(sum_xl > 0.0f)) continue;
      float sum_l2 = sums.sum_l2 - weight * signed_levels[i] * signed_levels[i];
      const int level =
          std::clamp(RoundToInt(x[i] * sum_l2 / sum_xl), -half_levels, half_levels - 1);
      if (level == signed_levels[i]) continue;
      sum_xl += weight * x[i] * level;
      sum_l2 += weight * level * level;
      // Keep it if it raises sum_xl² / sum_l2, the error the fit removes.
      if (sum_l2 > 0.0f && sum_xl * sum_xl * sums.sum_l2 > sums.sum_xl * sums.sum_xl * sum_l2) {
        signed_levels[i] = static_cast<int8_t>(level);
        sums = {sum_xl, sum_l2};
        changed = true;
      }
    }
    if (!changed) break;
  }
  for (int i = 0; i < n; ++i) levels[i] = static_cast<uint8_t>(signed_levels[i] + half_levels);
  return sums.sum_l2 > 0.0f ? sums.sum_xl / sums.sum_l2 : 0.0f;
}

// Q4_K / Q5_K: one super-block as 8 sub-blocks of 32 with x ≈ d * scale * level - dmin * min,
// levels in [0, max_level], 6-bit scales and mins packed as UnpackScaleMinK4 reads them.
void QuantizeScaleMinSuperBlock(const float* x, int max_level, const ScaleMinSearch& search,
                                uint16_t* d_bits, uint16_t* dmin_bits, uint8_t* packed_scales,
                                uint8_t* levels) {
  float scales[kSubBlocksOf32];
  float mins[kSubBlocksOf32];
  float max_scale = 0.0f;
  float max_min = 0.0f;
  for (int j = 0; j < kSubBlocksOf32; ++j) {
    const float* sub_x = x + 32 * j;
    // Weights: the sub-block's RMS plus |x|, favouring the larger values.
    float sum_x2 = 0.0f;
    for (int l = 0; l < 32; ++l) sum_x2 += sub_x[l] * sub_x[l];
    const float rms = std::sqrt(sum_x2 / 32);
    float weights[32];
    for (int l = 0; l < 32; ++l) weights[l] = rms + std::fabs(sub_x[l]);
    scales[j] = SearchScaleAndMin(sub_x, weights, 32, max_level, search, levels + 32 * j, &mins[j]);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float inverse_scale_step = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
  const float inverse_min_step = max_min > 0.0f ? 63.0f / max_min : 0.0f;
  int quantized_scales[kSubBlocksOf32];
  int quantized_mins[kSubBlocksOf32];
  std::memset(packed_scales, 0, 12);
  for (int j = 0; j < kSubBlocksOf32; ++j) {
    const int scale = std::clamp(RoundToInt(inverse_scale_step * scales[j]), 0, 63);
    const int min = std::clamp(RoundToInt(inverse_min_step * mins[j]), 0, 63);
    quantized_scales[j] = scale;
    quantized_mins[j] = min;
    // The inverse of UnpackScaleMinK4.
    if (j < 4) {
      packed_scales[j] |= static_cast<uint8_t>(scale);
      packed_scales[j + 4] |= static_cast<uint8_t>(min);
    } else {
      packed_scales[j + 4] = static_cast<uint8_t>((scale & 0x0f) | ((min & 0x0f) << 4));
      packed_scales[j - 4] |= static_cast<uint8_t>((scale >> 4) << 6);
      packed_scales[j] |= static_cast<uint8_t>((min >> 4) << 6);
    }
  }
  *d_bits = Fp32ToFp16(max_scale / 63.0f);
  *dmin_bits = Fp32ToFp16(max_min / 63.0f);
  // Re-quantize with the scales and mins as stored.
  for (int j = 0; j < kSubBlocksOf32; ++j) {
    const float d = Fp16ToFp32(*d_bits) * quantized_scales[j];
    if (d == 0.0f) continue;
    const float dm = Fp16ToFp32(*dmin_bits) * quantized_mins[j];
    for (int l = 0; l < 32; ++l) {
      levels[32 * j + l] =
          static_cast<uint8_t>(std::clamp(RoundToInt((x[32 * j + l] + dm) / d), 0, max_level));
    }
  }
}

}  // namespace

// ggml's quantize_row_q2_K_ref: 16 sub-blocks of 16 with |x|-weighted absolute-error searches;
// scales and mins quantized to 4 bits against their maxima.
void QuantizeRowQ2_K(const float* x, int64_t n, void* out) {
  constexpr ScaleMinSearch kSearch = {-0.5f, 0.1f, 15, true};
  auto* blocks = static_cast<BlockQ2_K*>(out);
  for (int64_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockQ2_K& block = blocks[b];
    uint8_t levels[kSuperBlockSize];
    float scales[kSubBlocksOf16];
    float mins[kSubBlocksOf16];
    float max_scale = 0.0f;
    float max_min = 0.0f;
    for (int j = 0; j < kSubBlocksOf16; ++j) {
      float weights[16];
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
      scales[j] = SearchScaleAndMin(x + 16 * j, weights, 16, 3, kSearch, levels + 16 * j, &mins[j]);
      max_scale = std::max(max_scale, scales[j]);
      max_min = std::max(max_min, mins[j]);
    }
    int quantized_scales[kSubBlocksOf16] = {};
    int quantized_mins[kSubBlocksOf16] = {};
    if (max_scale > 0.0f) {
      const float inverse_step = 15.0f / max_scale;
      for (int j = 0; j < kSubBlocksOf16; ++j) {
        quantized_scales[j] = std::clamp(RoundToInt(inverse_step * scales[j]), 0, 15);
      }
    }
    if (max_min > 0.0f) {
      const float inverse_step = 15.0f / max_min;
      for (int j = 0; j < kSubBlocksOf16; ++j) {
        quantized_mins[j] = std::clamp(RoundToInt(inverse_step * mins[j]), 0, 15);
      }
    }
    block.d = Fp32ToFp16(max_scale > 0.0f ? max_scale / 15.0f : 0.0f);
    block.dmin = Fp32ToFp16(max_min > 0.0f ? max_min / 15.0f : 0.0f);
    for (int j = 0; j < kSubBlocksOf16; ++j) {
      block.scales[j] = static_cast<uint8_t>(quantized_scales[j] | (quantized_mins[j] << 4));
      const float d = Fp16ToFp32(block.d) * quantized_scales[j];
      if (d == 0.0f) continue;
      const float dm = Fp16ToFp32(block.dmin) * quantized_mins[j];
      for (int l = 0; l < 16; ++l) {
        levels[16 * j + l] =
            static_cast<uint8_t>(std::clamp(RoundToInt((x[16 * j + l] + dm) / d), 0, 3));
      }
    }
    PackCrumbs(levels, block.qs);
  }
}

// ggml's quantize_row_q3_K_ref: 16 sub-blocks of 16 with refined x²-weighted scales, quantized to
// 6 bits (stored + 32) against the one of largest magnitude, which maps to -32.
void QuantizeRowQ3_K(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockQ3_K*>(out);
  for (int64_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockQ3_K& block = blocks[b];
    uint8_t levels[kSuperBlockSize];
    float scales[kSubBlocksOf16];
    for (int j = 0; j < kSubBlocksOf16; ++j) {
      scales[j] = SearchQ3Scale(x + 16 * j, 16, 4, levels + 16 * j);
    }
    const float max_scale = LargestMagnitude(scales, kSubBlocksOf16);
    int quantized_scales[kSubBlocksOf16] = {};  // signed, -32..31
    std::memset(block.scales, 0, sizeof(block.scales));
    if (max_scale != 0.0f) {
      const float inverse_step = -32.0f / max_scale;
      for (int j = 0; j < kSubBlocksOf16; ++j) {
        quantized_scales[j] = std::clamp(RoundToInt(inverse_step * scales[j]), -32, 31);
        // Low nibbles in bytes 0-7 (sub-blocks 8-15 in the high nibbles), top 2 bits in 8-11.
        const int stored = quantized_scales[j] + 32;
        block.scales[j % 8] |= static_cast<uint8_t>((stored & 0x0f) << (4 * (j / 8)));
        block.scales[8 + j % 4] |= static_cast<uint8_t>((stored >> 4) << (2 * (j / 4)));
      }
      block.d = Fp32ToFp16(1.0f / inverse_step);
    } else {
      block.d = Fp32ToFp16(0.0f);
    }
    for (int j = 0; j < kSubBlocksOf16; ++j) {
      const float d = Fp16ToFp32(block.d) * quantized_scales[j];
      if (d == 0.0f) continue;
      for (int l = 0; l < 16; ++l) {
        levels[16 * j + l] =
            static_cast<uint8_t>(std::clamp(RoundToInt(x[16 * j + l] / d), -4, 3) + 4);
      }
    }
    // Levels 4..7 set their high bit in hmask (bit j / 32 of byte j % 32) and keep 2 bits.
    std::memset(block.hmask, 0, sizeof(block.hmask));
    for (int j = 0; j < kSuperBlockSize; ++j) {
      if (levels[j] > 3) {
        block.hmask[j % 32] |= static_cast<uint8_t>(1 << (j / 32));
        levels[j] -= 4;
      }
    }
    PackCrumbs(levels, block.qs);
  }
}

// ggml's quantize_row_q4_K_ref.
void QuantizeRowQ4_K(const float* x, int64_t n, void* out) {
  constexpr ScaleMinSearch kSearch = {-1.0f, 0.1f, 20, false};
  auto* blocks = static_cast<BlockQ4_K*>(out);
  for (int64_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockQ4_K& block = blocks[b];
    uint8_t levels[kSuperBlockSize];
    QuantizeScaleMinSuperBlock(x, 15, kSearch, &block.d, &block.dmin, block.scales, levels);
    for (int chunk = 0; chunk < 4; ++chunk) {
      for (int l = 0; l < 32; ++l) {
        block.qs[32 * chunk + l] =
            static_cast<uint8_t>(levels[64 * chunk + l] | (levels[64 * chunk + l + 32] << 4));
      }
    }
  }
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

// ggml's quantize_row_q6_K_ref: 16 sub-blocks of 16 with x²-weighted scale searches, scales
// quantized to int8 against the one of largest magnitude, which maps to -128.
void QuantizeRowQ6_K(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockQ6_K*>(out);
  for (int64_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockQ6_K& block = blocks[b];
    uint8_t levels[kSuperBlockSize];
    float scales[kSubBlocksOf16];
    for (int j = 0; j < kSubBlocksOf16; ++j) {
      scales[j] = SearchSymmetricScale(x + 16 * j, 16, 32, levels + 16 * j);
    }
    const float max_scale = LargestMagnitude(scales, kSubBlocksOf16);
    if (std::fabs(max_scale) < kNegligibleMagnitude) {
      std::memset(&block, 0, sizeof(block));
      continue;
    }
    const float inverse_step = -128.0f / max_scale;
    block.d = Fp32ToFp16(1.0f / inverse_step);
    for (int j = 0; j < kSubBlocksOf16; ++j) {
      block.scales[j] = static_cast<int8_t>(std::min(127, RoundToInt(inverse_step * scales[j])));
    }
    for (int j = 0; j < kSubBlocksOf16; ++j) {
      const float d = Fp16ToFp32(block.d) * block.scales[j];
      if (d == 0.0f) continue;
      for (int l = 0; l < 16; ++l) {
        levels[16 * j + l] =
            static_cast<uint8_t>(std::clamp(RoundToInt(x[16 * j + l] / d), -32, 31) + 32);
      }
    }
    // Per 128-value half: ql byte l holds levels l (low nibble) and l + 64 (high), byte l + 32
    // levels l + 32 and l + 96; qh byte l their top 2 bits in that order.
    for (int half = 0; half < 2; ++half) {
      const uint8_t* half_levels = levels + 128 * half;
      uint8_t* ql = block.ql + 64 * half;
      for (int l = 0; l < 32; ++l) {
        ql[l] = static_cast<uint8_t>((half_levels[l] & 0x0f) | ((half_levels[l + 64] & 0x0f) << 4));
        ql[l + 32] = static_cast<uint8_t>((half_levels[l + 32] & 0x0f) |
                                          ((half_levels[l + 96] & 0x0f) << 4));
        block.qh[32 * half + l] = static_cast<uint8_t>(
            (half_levels[l] >> 4) | ((half_levels[l + 32] >> 4) << 2) |
            ((half_levels[l + 64] >> 4) << 4) | ((half_levels[l + 96] >> 4) << 6));
      }
    }
  }
}

// ggml's quantize_iq4_xs without an importance matrix: the best IQ4_NL grid scale per sub-block of
// 32, quantized to 6 bits (stored + 32) against the one of largest magnitude, which maps to -32;
// then each value's nearest grid entry at its sub-block's stored scale.
void QuantizeRowIq4Xs(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockIq4Xs*>(out);
  for (int64_t b = 0; b < n / kSuperBlockSize; ++b, x += kSuperBlockSize) {
    BlockIq4Xs& block = blocks[b];
    float scales[kSubBlocksOf32];
    for (int j = 0; j < kSubBlocksOf32; ++j) scales[j] = internal::BestIq4NlScale(x + 32 * j);
    const float d = -LargestMagnitude(scales, kSubBlocksOf32) / 32;
    block.d = Fp32ToFp16(d);
    const float inverse_d = d != 0.0f ? 1.0f / d : 0.0f;
    block.scales_h = 0;
    std::memset(block.scales_l, 0, sizeof(block.scales_l));
    for (int j = 0; j < kSubBlocksOf32; ++j) {
      const int scale = std::clamp(RoundToInt(inverse_d * scales[j]), -32, 31);
      const float sub_d = d * scale;
      internal::QuantizeIq4NlIndices(x + 32 * j, sub_d != 0.0f ? 1.0f / sub_d : 0.0f,
                                     block.qs + 16 * j);
      const int stored = scale + 32;
      block.scales_l[j / 2] |= static_cast<uint8_t>((stored & 0x0f) << (4 * (j % 2)));
      block.scales_h |= static_cast<uint16_t>((stored >> 4) << (2 * j));
    }
  }
}

}  // namespace vllm::kernels
