// Internal to the AVX2 and AVX-512 translation units (cpu/quantize_q8_avx2.cc,
// cpu/quantize_q8_avx512.cc): PrepareActivations' kQ8 / kQ8K loop, written once over the tier's
// lanes. Each group of blocks sharing a scale gets max|x| over its values, d = max|x| / 127 as fp16
// bits (vcvtps2ph rounds to nearest even as Fp32ToFp16 does) and its scale as f32 (d itself for
// kQ8K), then each block's quants x · (127 / max|x|) and their sums from the tier's quantize_block.
// Include it only where F16C is enabled; everything here has internal linkage.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

// Lanes: Vec, kWidth, Zero, Load, Abs, Max, ReduceMax (lanes_avx2.h, exp_avx512.h).
// quantize_block(x, multiplier, qs, half_sums): a block's 32 quants and their sums per 16 values,
// bit for bit the scalar path's (the low byte of each rounded value, as its int8 cast keeps).
template <typename Lanes, typename QuantizeBlock>
void PrepareQ8BlocksLanes(ActivationFormat format, const float* x, int64_t num_blocks,
                          BlockQ8_0* blocks, float* scales, int32_t* sums, int32_t* half_sums,
                          const QuantizeBlock& quantize_block) {
  const int64_t blocks_per_scale = Q8BlocksPerScale(format);
  for (int64_t first = 0; first < num_blocks; first += blocks_per_scale) {
    const float* values = x + kQuantBlockSize * first;
    typename Lanes::Vec amax = Lanes::Zero();
    for (int64_t i = 0; i < blocks_per_scale * kQuantBlockSize; i += Lanes::kWidth) {
      // vmaxps returns its second operand when either is NaN: the running max is kept, as
      // std::max keeps it in the scalar path (max|x| is exact in any order).
      amax = Lanes::Max(Lanes::Abs(Lanes::Load(values + i)), amax);
    }
    const float max = Lanes::ReduceMax(amax);
    const float d = max / 127.0f;
    const unsigned short d_bits = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const float scale = format == ActivationFormat::kQ8K ? d : _cvtsh_ss(d_bits);
    const float multiplier = max != 0.0f ? 127.0f / max : 0.0f;
    for (int64_t b = first; b < first + blocks_per_scale; ++b) {
      blocks[b].d = d_bits;
      scales[b] = scale;
      quantize_block(x + kQuantBlockSize * b, multiplier, blocks[b].qs, half_sums + 2 * b);
      sums[b] = half_sums[2 * b] + half_sums[2 * b + 1];
    }
  }
}

}  // namespace
}  // namespace vllm::kernels
