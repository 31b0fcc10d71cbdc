// AVX-512 loops for MeasureDotPeak (dot_peak_kernels.h).
#include <immintrin.h>

#include "kernels/cpu/dot_peak_kernels.h"
#include "kernels/cpu/exp_avx512.h"

namespace vllm::kernels {
namespace {

// Sums the chains' lanes into one float, so every instruction's result is used.
float Fold(const __m512* chains) {
  __m512 sum = chains[0];
  for (int c = 1; c < kDotPeakChains; ++c) sum = _mm512_add_ps(sum, chains[c]);
  return _mm512_reduce_add_ps(sum);
}

}  // namespace

float Int8DotLoopAvx512(int64_t iterations) {
  __m512i acc[kDotPeakChains];
  for (int c = 0; c < kDotPeakChains; ++c) acc[c] = _mm512_set1_epi32(c);
  const __m512i a = _mm512_set1_epi8(3);
  const __m512i b = _mm512_set1_epi8(-2);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kDotPeakChains; ++c) acc[c] = _mm512_dpbusd_epi32(acc[c], a, b);
  }
  __m512 chains[kDotPeakChains];
  for (int c = 0; c < kDotPeakChains; ++c) chains[c] = _mm512_cvtepi32_ps(acc[c]);
  return Fold(chains);
}

float Bf16DotLoopAvx512(int64_t iterations) {
  __m512 acc[kDotPeakChains];
  for (int c = 0; c < kDotPeakChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80);  // 1.0
  const __m512bh b = (__m512bh)_mm512_set1_epi16(0x3c00);  // 2^-7
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kDotPeakChains; ++c) acc[c] = _mm512_dpbf16_ps(acc[c], a, b);
  }
  return Fold(acc);
}

float F32FmaLoopAvx512(int64_t iterations) { return FmaChainsLoop<Avx512Lanes>(iterations, Fold); }

}  // namespace vllm::kernels
