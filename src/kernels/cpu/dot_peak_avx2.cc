// AVX2 loops for MeasureDotPeak (dot_peak_kernels.h). The int8 step is the one the AVX2 kernels
// use: vpmaddubsw (u8 x s8 pairs into i16), vpmaddwd (pairs into i32), vpaddd.
#include <immintrin.h>

#include "kernels/cpu/dot_peak_kernels.h"

namespace vllm::kernels {
namespace {

float Fold(const __m256* chains) {
  __m256 sum = chains[0];
  for (int c = 1; c < kDotPeakChains; ++c) sum = _mm256_add_ps(sum, chains[c]);
  const __m128 half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
  const __m128 quarter = _mm_add_ps(half, _mm_movehl_ps(half, half));
  return _mm_cvtss_f32(_mm_add_ss(quarter, _mm_shuffle_ps(quarter, quarter, 1)));
}

}  // namespace

float Int8DotLoopAvx2(int64_t iterations) {
  __m256i acc[kDotPeakChains];
  for (int c = 0; c < kDotPeakChains; ++c) acc[c] = _mm256_set1_epi32(c);
  __m256i a = _mm256_set1_epi8(3);
  const __m256i b = _mm256_set1_epi8(-2);
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t i = 0; i < iterations; ++i) {
    // An empty asm that "changes" a, so the products are not hoisted out of the loop.
    asm volatile("" : "+x"(a));
#pragma GCC unroll 12
    for (int c = 0; c < kDotPeakChains; ++c) {
      const __m256i pairs = _mm256_maddubs_epi16(a, b);
      acc[c] = _mm256_add_epi32(acc[c], _mm256_madd_epi16(pairs, ones));
    }
  }
  __m256 chains[kDotPeakChains];
  for (int c = 0; c < kDotPeakChains; ++c) chains[c] = _mm256_cvtepi32_ps(acc[c]);
  return Fold(chains);
}

float F32FmaLoopAvx2(int64_t iterations) {
  __m256 acc[kDotPeakChains];
  for (int c = 0; c < kDotPeakChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
  const __m256 a = _mm256_set1_ps(0.999f);
  const __m256 b = _mm256_set1_ps(0.001f);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kDotPeakChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  }
  return Fold(acc);
}

}  // namespace vllm::kernels
