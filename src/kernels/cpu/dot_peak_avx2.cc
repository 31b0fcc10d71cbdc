// AVX2 loops for MeasureDotPeak (dot_peak_kernels.h). The int8 step is the one the AVX2 kernels
// use: vpmaddubsw (u8 x s8 pairs into i16), vpmaddwd (pairs into i32), vpaddd. Every loop over
// the chains is unrolled, so that the accumulators live in registers (otherwise GCC keeps the
// arrays on the stack and the loads and stores, not the dot instructions, set the pace).
#include <immintrin.h>

#include "kernels/cpu/dot_peak_kernels.h"
#include "kernels/cpu/lanes_avx2.h"

namespace vllm::kernels {
namespace {

float Fold(const __m256 (&chains)[kDotPeakChains]) {
  __m256 sum = chains[0];
#pragma GCC unroll 12
  for (int c = 1; c < kDotPeakChains; ++c) sum = _mm256_add_ps(sum, chains[c]);
  const __m128 half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
  const __m128 quarter = _mm_add_ps(half, _mm_movehl_ps(half, half));
  return _mm_cvtss_f32(_mm_add_ss(quarter, _mm_shuffle_ps(quarter, quarter, 1)));
}

// acc += the int8 step's 32 products of u8 x s8 (vpmaddubsw, vpmaddwd, vpaddd), in inline asm:
// written with intrinsics, GCC computed the products once per round for all chains.
inline void DotStep(__m256i& acc, __m256i u8, __m256i s8, __m256i ones) {
  __m256i pairs;
  asm("vpmaddubsw %[s8], %[u8], %[pairs]\n\t"
      "vpmaddwd %[ones], %[pairs], %[pairs]\n\t"
      "vpaddd %[pairs], %[acc], %[acc]"
      : [acc] "+x"(acc), [pairs] "=&x"(pairs)
      : [u8] "x"(u8), [s8] "x"(s8), [ones] "x"(ones));
}

}  // namespace

float Int8DotLoopAvx2(int64_t iterations) {
  __m256i acc[kDotPeakChains];
#pragma GCC unroll 12
  for (int c = 0; c < kDotPeakChains; ++c) acc[c] = _mm256_set1_epi32(c);
  const __m256i a = _mm256_set1_epi8(3);
  const __m256i b = _mm256_set1_epi8(-2);
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kDotPeakChains; ++c) DotStep(acc[c], a, b, ones);
  }
  __m256 chains[kDotPeakChains];
#pragma GCC unroll 12
  for (int c = 0; c < kDotPeakChains; ++c) chains[c] = _mm256_cvtepi32_ps(acc[c]);
  return Fold(chains);
}

float F32FmaLoopAvx2(int64_t iterations) { return FmaChainsLoop<Avx2Lanes>(iterations, Fold); }

}  // namespace vllm::kernels
