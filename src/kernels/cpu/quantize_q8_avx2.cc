// AVX2 preparation of Q8_0 activations, the AVX-512 path's twin (cpu/quantize_q8_avx512.cc, the
// loop shared through cpu/quantize_q8_lanes.h) with 8 lanes: bit-identical to the scalar path, as
// vcvtps2dq rounds x · (127 / max|x|) to nearest even as RoundToInt does for values this small.
#include <immintrin.h>

#include "kernels/cpu/lanes_avx2.h"
#include "kernels/cpu/quantize_q8_lanes.h"

namespace vllm::kernels {
namespace {

// One block's quants x · multiplier and their sums per 16 values.
void QuantizeBlock(const float* x, float multiplier, int8_t* qs, int32_t* half_sums) {
  const __m256 scale = _mm256_set1_ps(multiplier);
  // The low byte of each rounded value, as the scalar int8 cast keeps (which matters only for inf
  // and NaN, where vcvtps2dq gives 0x80000000): masked to 0 ... 255, the packs never saturate.
  __m256i low_bytes[4];
  for (int i = 0; i < 4; ++i) {
    low_bytes[i] =
        _mm256_and_si256(_mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * i), scale)),
                         _mm256_set1_epi32(0xff));
  }
  const __m256i packed = _mm256_packus_epi16(_mm256_packus_epi32(low_bytes[0], low_bytes[1]),
                                             _mm256_packus_epi32(low_bytes[2], low_bytes[3]));
  // The packs work within each 128-bit lane: 4-byte runs of values 0-3, 8-11, 16-19, 24-27,
  // 4-7, ... back into order.
  const __m256i q = _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs), q);
  // vpsadbw sums each 8 bytes as unsigned: the quants plus 128, so 16 · 128 comes off each half.
  alignas(32) int64_t sums_of_eight[4];
  _mm256_store_si256(
      reinterpret_cast<__m256i*>(sums_of_eight),
      _mm256_sad_epu8(_mm256_xor_si256(q, _mm256_set1_epi8(-128)), _mm256_setzero_si256()));
  constexpr int32_t kBias = 16 * 128;
  half_sums[0] = static_cast<int32_t>(sums_of_eight[0] + sums_of_eight[1]) - kBias;
  half_sums[1] = static_cast<int32_t>(sums_of_eight[2] + sums_of_eight[3]) - kBias;
}

}  // namespace

void PrepareQ8BlocksAvx2(ActivationFormat format, const float* x, int64_t num_blocks,
                         BlockQ8_0* blocks, float* scales, int32_t* sums, int32_t* half_sums) {
  PrepareQ8BlocksLanes<Avx2Lanes>(format, x, num_blocks, blocks, scales, sums, half_sums,
                                  QuantizeBlock);
}

}  // namespace vllm::kernels
