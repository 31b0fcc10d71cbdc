// Internal to kernels: the code the K-quants (Q2_K ... Q6_K, 256-value super-blocks) share: their
// decoders' bit unpacking, the scale searches of ggml's reference quantizers (no importance
// matrix; each sub-block gets its own scale and min from a weighted least-squares search, the
// sub-block scales are quantized against one fp16 super-block scale, and the values re-quantized
// with the scales as stored), and their packers' common fields. Each type's own code is in its file
// in types/.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/half.h"
#include "kernels/packed_nibble_layout.h"
#include "kernels/quant_blocks.h"
#include "kernels/quantizers.h"

namespace vllm::kernels {

// Decoding (DecodedBlock).

// Q2_K / Q3_K low 2 bits: byte l of a 128-value half holds elements l, l+32, l+64, l+96 of it
// (in bits 0-1, 2-3, 4-5, 6-7).
inline void SplitCrumbs(const uint8_t* __restrict qs, int8_t* __restrict q) {
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
inline void SplitChunkNibbles(const uint8_t* __restrict qs, int8_t* __restrict q) {
  for (int chunk = 0; chunk < 4; ++chunk) {
    for (int l = 0; l < 32; ++l) {
      q[chunk * 64 + l] = static_cast<int8_t>(qs[chunk * 32 + l] & 0x0f);
      q[chunk * 64 + l + 32] = static_cast<int8_t>(qs[chunk * 32 + l] >> 4);
    }
  }
}

// Q4_K / Q5_K scales and mins: d * sc and dmin * mn per sub-block of 32.
inline void KQuantScalesAndMins(uint16_t d_bits, uint16_t dmin_bits, const uint8_t* packed,
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

// Q3_K / Q6_K scales: d * scale_of(s) per sub-block of 16, no mins.
template <typename ScaleOf>
void ScalesOf16(uint16_t d_bits, DecodedBlock* out, ScaleOf scale_of) {
  const float d = Fp16ToFp32(d_bits);
  for (int s = 0; s < 16; ++s) {
    out->scale[s] = d * scale_of(s);
    out->min[s] = 0.0f;
  }
}

// Packing (packed_nibble_layout.h). Quants come from the type's decoder, so the packed codes mean
// exactly what the blocks do.

// The low 4 bits of a chunk's 32 codes in Q4_0's order: byte j = code j | code j + 16 << 4.
inline void StoreLowNibbles(const int8_t* codes, int64_t lane, uint8_t* nibbles) {
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

// Quantizing: the searches, beside quantizers.h's helpers.
namespace internal {

// Sub-blocks per super-block: of 16 values (Q2_K, Q3_K, Q6_K) and of 32 (Q4_K, Q5_K, IQ4_XS).
inline constexpr int kSubBlocksOf16 = kSuperBlockSize / 16;
inline constexpr int kSubBlocksOf32 = kSuperBlockSize / 32;
// The most values one scale search sees.
inline constexpr int kMaxSearchValues = 32;

// Q2_K / Q3_K: 256 levels of 2 bits as 64 bytes; byte l of each 128-value half holds its levels
// l, l + 32, l + 64 and l + 96 in bits 0-1, 2-3, 4-5 and 6-7.
inline void PackCrumbs(const uint8_t* levels, uint8_t* qs) {
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
inline float SearchScaleAndMin(const float* x, const float* weights, int n, int max_level,
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
inline LevelSums FitSymmetricLevels(const float* x, int n, int half_levels, float inverse_scale,
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

// The frame of Q3_K's and Q6_K's x²-weighted symmetric searches (ggml's make_q3_quants and
// make_qx_quants): a negligible x[0..n) gets all levels 0 and scale 0; otherwise the levels are
// fitted at inverse scale -half_levels / largest (the value of largest magnitude), and
// refine(largest, their sums, the levels) improves the levels in place and returns the scale.
// Writes l + half_levels.
template <typename Refine>
float SearchSymmetricLevels(const float* x, int n, int half_levels, uint8_t* levels,
                            Refine refine) {
  const float largest = LargestMagnitude(x, n);
  if (std::fabs(largest) < kNegligibleMagnitude) {
    std::fill_n(levels, n, 0);
    return 0.0f;
  }
  int8_t signed_levels[kMaxSearchValues];
  const LevelSums sums =
      FitSymmetricLevels(x, n, half_levels, -half_levels / largest, signed_levels);
  const float scale = refine(largest, sums, signed_levels);
  for (int i = 0; i < n; ++i) levels[i] = static_cast<uint8_t>(signed_levels[i] + half_levels);
  return scale;
}

// Q3_K / Q6_K: each sub-block of 16's scale from `search`, which writes its levels; returns the
// scale of largest magnitude.
inline float SearchScalesOf16(const float* x, int half_levels,
                              float (*search)(const float* x, int n, int half_levels,
                                              uint8_t* levels),
                              float* scales, uint8_t* levels) {
  for (int j = 0; j < kSubBlocksOf16; ++j) {
    scales[j] = search(x + 16 * j, 16, half_levels, levels + 16 * j);
  }
  return LargestMagnitude(scales, kSubBlocksOf16);
}

// Q3_K / Q6_K: re-quantizes each sub-block of 16 with its scale as stored, d * quantized_scales[j]
// (a sub-block whose scale is 0 keeps its levels), to l + half_levels, l in
// [-half_levels, half_levels - 1].
template <typename QuantizedScale>
void RequantizeSubBlocksOf16(const float* x, uint16_t d_bits,
                             const QuantizedScale* quantized_scales, int half_levels,
                             uint8_t* levels) {
  for (int j = 0; j < kSubBlocksOf16; ++j) {
    const float d = Fp16ToFp32(d_bits) * quantized_scales[j];
    if (d == 0.0f) continue;
    for (int l = 0; l < 16; ++l) {
      levels[16 * j + l] = static_cast<uint8_t>(
          std::clamp(RoundToInt(x[16 * j + l] / d), -half_levels, half_levels - 1) + half_levels);
    }
  }
}

// Q4_K / Q5_K: one super-block as 8 sub-blocks of 32 with x ≈ d * scale * level - dmin * min,
// levels in [0, max_level], 6-bit scales and mins packed as UnpackScaleMinK4 reads them.
inline void QuantizeScaleMinSuperBlock(const float* x, int max_level, const ScaleMinSearch& search,
                                       uint16_t* d_bits, uint16_t* dmin_bits,
                                       uint8_t* packed_scales, uint8_t* levels) {
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
}  // namespace internal
}  // namespace vllm::kernels
