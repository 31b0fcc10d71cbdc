// Internal: the per-ISA loops behind MeasureDotPeak. Each runs `iterations` rounds of
// kDotPeakChains independent dot instructions and returns a value that depends on every result
// (so the loop is not optimized away).
#pragma once

#include <cstdint>

#include "kernels/isa.h"

namespace vllm::kernels {

// Independent accumulators per round: enough to cover the instructions' latency on two pipes.
constexpr int kDotPeakChains = 12;

// Operations one instruction performs (a multiply-add is two).
constexpr double kOpsPerVpdpbusd512 = 2 * 64;   // 16 lanes x 4 u8 x s8 products
constexpr double kOpsPerVdpbf16ps512 = 2 * 32;  // 16 lanes x 2 bf16 products
constexpr double kOpsPerFma512 = 2 * 16;
constexpr double kOpsPerTdpbf16ps = 2 * 16 * 16 * 32;  // 16 x 16 sums of 32 bf16 products
constexpr double kOpsPerInt8Step256 = 2 * 32;  // vpmaddubsw + vpmaddwd + vpaddd: 32 products
constexpr double kOpsPerFma256 = 2 * 8;

VLLM_X86_KERNEL float Int8DotLoopAvx512(int64_t iterations);
VLLM_X86_KERNEL float Bf16DotLoopAvx512(int64_t iterations);
VLLM_X86_KERNEL float F32FmaLoopAvx512(int64_t iterations);
// Configures and releases the calling thread's tiles; only where AmxBf16Usable().
VLLM_X86_KERNEL float Bf16TileLoopAmx(int64_t iterations);
VLLM_X86_KERNEL float Int8DotLoopAvx2(int64_t iterations);
VLLM_X86_KERNEL float F32FmaLoopAvx2(int64_t iterations);

namespace {

// The f32 FMA loop on an ISA's Lanes (lanes.h): chain c starts at c and becomes chain · 0.999 +
// 0.001 each round; fold(chains) sums them. Instantiated in each ISA's translation unit.
template <typename Lanes, typename Fold>
inline float FmaChainsLoop(int64_t iterations, const Fold& fold) {
  using Vec = typename Lanes::Vec;
  Vec acc[kDotPeakChains];
#pragma GCC unroll 12
  for (int c = 0; c < kDotPeakChains; ++c) acc[c] = Lanes::Set1(static_cast<float>(c));
  const Vec a = Lanes::Set1(0.999f);
  const Vec b = Lanes::Set1(0.001f);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kDotPeakChains; ++c) acc[c] = Lanes::Fmadd(acc[c], a, b);
  }
  return fold(acc);
}

}  // namespace

}  // namespace vllm::kernels
