// AVX-512 preparation of Q8_0 activations: each block of 32 values quantized as ggml's x86 path
// quantizes activations (d = max|x| / 127 stored as fp16, q = x · (127 / max|x|) rounded to
// nearest even), with the block's scale as f32 and the integer sums of its quants per 32 and per
// 16 values, in one pass.
// Bit-identical to the scalar path: max|x| is exact in any order (a NaN value is skipped, as
// std::max skips it), vcvtps2ph rounds to nearest even as Fp32ToFp16 does, and vcvtps2dq rounds
// x · (127 / max|x|) to nearest even as RoundToInt does for values this small.
#include <immintrin.h>

#include "kernels/linear_internal.h"

namespace vllm::kernels {

void PrepareQ8BlocksAvx512(const float* x, int64_t num_blocks, BlockQ8_0* blocks, float* scales,
                           int32_t* sums, int32_t* half_sums) {
  for (int64_t b = 0; b < num_blocks; ++b) {
    const __m512 low = _mm512_loadu_ps(x + 32 * b);
    const __m512 high = _mm512_loadu_ps(x + 32 * b + 16);
    // vmaxps returns its second operand when either is NaN: the running max is kept.
    __m512 amax = _mm512_max_ps(_mm512_abs_ps(low), _mm512_setzero_ps());
    amax = _mm512_max_ps(_mm512_abs_ps(high), amax);
    const float max = _mm512_reduce_max_ps(amax);
    const float d = max / 127.0f;
    const float inverse = max != 0.0f ? 127.0f / max : 0.0f;
    const unsigned short d_bits = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    blocks[b].d = d_bits;
    scales[b] = _cvtsh_ss(d_bits);
    const __m512 scale = _mm512_set1_ps(inverse);
    // The quants keep the low byte of each rounded value, as the scalar int8 cast does (which
    // matters only for inf and NaN, where 127 / max|x| or x overflows); the sums are over those
    // bytes.
    const __m128i q_low = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(low, scale)));
    const __m128i q_high = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(high, scale)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(blocks[b].qs), q_low);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(blocks[b].qs + 16), q_high);
    half_sums[2 * b] = _mm512_reduce_add_epi32(_mm512_cvtepi8_epi32(q_low));
    half_sums[2 * b + 1] = _mm512_reduce_add_epi32(_mm512_cvtepi8_epi32(q_high));
    sums[b] = half_sums[2 * b] + half_sums[2 * b + 1];
  }
}

}  // namespace vllm::kernels
