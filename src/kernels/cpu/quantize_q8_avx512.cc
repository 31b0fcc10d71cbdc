// AVX-512 preparation of Q8_0 activations: each block of 32 values quantized as ggml's x86 path
// quantizes activations (d = max|x| / 127 stored as fp16, q = x · (127 / max|x|) rounded to
// nearest even), with the block's scale as f32 and the integer sums of its quants per 32 and per
// 16 values, in one pass; for kQ8K the same with max|x| over each 256 values and d kept in f32.
// Bit-identical to the scalar path: max|x| is exact in any order (a NaN value is skipped, as
// std::max skips it), vcvtps2ph rounds to nearest even as Fp32ToFp16 does, and vcvtps2dq rounds
// x · (127 / max|x|) to nearest even as RoundToInt does for values this small.
#include <immintrin.h>

#include "kernels/linear_internal.h"

namespace vllm::kernels {
namespace {

// max|x| over `num_blocks` blocks of 32 values.
float AbsMax(const float* x, int64_t num_blocks) {
  __m512 amax = _mm512_setzero_ps();
  for (int64_t i = 0; i < num_blocks * kQuantBlockSize; i += 16) {
    // vmaxps returns its second operand when either is NaN: the running max is kept.
    amax = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + i)), amax);
  }
  return _mm512_reduce_max_ps(amax);
}

// One block's quants x · multiplier and their sums per 32 and per 16 values.
void QuantizeBlock(const float* x, __m512 multiplier, BlockQ8_0& block, int32_t& sum,
                   int32_t* half_sums) {
  // The quants keep the low byte of each rounded value, as the scalar int8 cast does (which
  // matters only for inf and NaN, where 127 / max|x| or x overflows); the sums are over those
  // bytes.
  const __m128i q_low =
      _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x), multiplier)));
  const __m128i q_high =
      _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + 16), multiplier)));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(block.qs), q_low);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(block.qs + 16), q_high);
  half_sums[0] = _mm512_reduce_add_epi32(_mm512_cvtepi8_epi32(q_low));
  half_sums[1] = _mm512_reduce_add_epi32(_mm512_cvtepi8_epi32(q_high));
  sum = half_sums[0] + half_sums[1];
}

}  // namespace

void PrepareQ8BlocksAvx512(ActivationFormat format, const float* x, int64_t num_blocks,
                           BlockQ8_0* blocks, float* scales, int32_t* sums, int32_t* half_sums) {
  const int64_t blocks_per_scale = Q8BlocksPerScale(format);
  for (int64_t first = 0; first < num_blocks; first += blocks_per_scale) {
    const float max = AbsMax(x + kQuantBlockSize * first, blocks_per_scale);
    const float d = max / 127.0f;
    const unsigned short d_bits = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const float scale = format == ActivationFormat::kQ8K ? d : _cvtsh_ss(d_bits);
    const __m512 multiplier = _mm512_set1_ps(max != 0.0f ? 127.0f / max : 0.0f);
    for (int64_t b = first; b < first + blocks_per_scale; ++b) {
      blocks[b].d = d_bits;
      scales[b] = scale;
      QuantizeBlock(x + kQuantBlockSize * b, multiplier, blocks[b], sums[b], half_sums + 2 * b);
    }
  }
}

}  // namespace vllm::kernels
