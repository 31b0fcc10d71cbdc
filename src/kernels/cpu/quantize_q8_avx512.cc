// AVX-512 preparation of Q8_0 activations: each block of 32 values quantized as ggml's x86 path
// quantizes activations (d = max|x| / 127 stored as fp16, q = x · (127 / max|x|) rounded to
// nearest even), with the block's scale as f32 and the integer sums of its quants per 32 and per
// 16 values, in one pass (cpu/quantize_q8_lanes.h); for kQ8K the same with max|x| over each 256
// values and d kept in f32. Bit-identical to the scalar path: vcvtps2dq rounds
// x · (127 / max|x|) to nearest even as RoundToInt does for values this small.
#include <immintrin.h>

#include "kernels/cpu/exp_avx512.h"
#include "kernels/cpu/quantize_q8_lanes.h"

namespace vllm::kernels {
namespace {

// One block's quants x · multiplier and their sums per 16 values.
void QuantizeBlock(const float* x, float multiplier, int8_t* qs, int32_t* half_sums) {
  const __m512 scale = _mm512_set1_ps(multiplier);
  // The quants keep the low byte of each rounded value, as the scalar int8 cast does (which
  // matters only for inf and NaN, where 127 / max|x| or x overflows); the sums are over those
  // bytes.
  const __m128i q_low =
      _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x), scale)));
  const __m128i q_high =
      _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + 16), scale)));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), q_low);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 16), q_high);
  half_sums[0] = _mm512_reduce_add_epi32(_mm512_cvtepi8_epi32(q_low));
  half_sums[1] = _mm512_reduce_add_epi32(_mm512_cvtepi8_epi32(q_high));
}

}  // namespace

void PrepareQ8BlocksAvx512(ActivationFormat format, const float* x, int64_t num_blocks,
                           BlockQ8_0* blocks, float* scales, int32_t* sums, int32_t* half_sums) {
  PrepareQ8BlocksLanes<Avx512Lanes>(format, x, num_blocks, blocks, scales, sums, half_sums,
                                    QuantizeBlock);
}

}  // namespace vllm::kernels
