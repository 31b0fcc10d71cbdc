#include "kernels/dot_peak.h"

#include <algorithm>
#include <atomic>
#include <chrono>

#include "kernels/cpu/dot_peak_kernels.h"
#include "kernels/isa.h"

namespace vllm::kernels {
namespace {

// Operations per second of `loop` on every thread at once: rounds of kDotPeakChains
// instructions of `ops_per_instruction` each, best of three passes of about `seconds`.
double Measure(ThreadPool& pool, double seconds, double ops_per_instruction,
               float (*loop)(int64_t)) {
  // Calibrate the rounds per pass on one thread.
  int64_t iterations = 1 << 16;
  for (;;) {
    const auto start = std::chrono::steady_clock::now();
    volatile float sink = loop(iterations);
    (void)sink;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > seconds / 4 || iterations > (int64_t{1} << 34)) {
      iterations = static_cast<int64_t>(iterations * seconds / std::max(elapsed, 1e-9));
      break;
    }
    iterations *= 4;
  }
  double best = 0.0;
  for (int pass = 0; pass < 3; ++pass) {
    std::atomic<float> sink{0.0f};
    const auto start = std::chrono::steady_clock::now();
    pool.Run([&](int, int) { sink = sink + loop(iterations); });
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double ops =
        static_cast<double>(iterations) * kDotPeakChains * ops_per_instruction * pool.num_threads();
    best = std::max(best, ops / elapsed);
  }
  return best;
}

// The best of five timings of `loop`, in seconds.
double BestSeconds(float (*loop)(int64_t), int64_t iterations) {
  double best = 1e30;
  for (int pass = 0; pass < 5; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    volatile float sink = loop(iterations);
    (void)sink;
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

bool Bf16DotsOnFma() {
  static const bool on_fma = [] {
    if (BestIsa() != Isa::kAvx512) return false;
    // About 0.2 ms in all. FMAs win only by a clear margin: where the two are close the choice
    // would not matter, and it should not flip between runs.
    constexpr int64_t kIterations = int64_t{1} << 12;
    constexpr double kMargin = 1.25;
    const double products_per_loop = static_cast<double>(kIterations) * kDotPeakChains;
    const double bf16_products_per_second =
        products_per_loop * (kOpsPerVdpbf16ps512 / 2) / BestSeconds(Bf16DotLoopAvx512, kIterations);
    const double fma_products_per_second =
        products_per_loop * (kOpsPerFma512 / 2) / BestSeconds(F32FmaLoopAvx512, kIterations);
    return fma_products_per_second > kMargin * bf16_products_per_second;
  }();
  return on_fma;
}

Bf16Path Bf16WeightPath() {
  static const Bf16Path path = [] {
    if (AmxBf16Usable()) return Bf16Path::kTiles;
    return Bf16DotsOnFma() ? Bf16Path::kFmas : Bf16Path::kDots;
  }();
  return path;
}

DotPeak MeasureDotPeak(ThreadPool& pool, double seconds) {
  DotPeak peak;
  const Isa isa = BestIsa();
  peak.isa = IsaName(isa);
  switch (isa) {
    case Isa::kAvx512:
      peak.int8_ops_per_second = Measure(pool, seconds, kOpsPerVpdpbusd512, Int8DotLoopAvx512);
      peak.bf16_ops_per_second = Measure(pool, seconds, kOpsPerVdpbf16ps512, Bf16DotLoopAvx512);
      peak.f32_ops_per_second = Measure(pool, seconds, kOpsPerFma512, F32FmaLoopAvx512);
      if (AmxBf16Usable()) {
        peak.amx_bf16_ops_per_second = Measure(pool, seconds, kOpsPerTdpbf16ps, Bf16TileLoopAmx);
      }
      peak.bf16_weight_path = Bf16PathName(Bf16WeightPath());
      switch (Bf16WeightPath()) {
        case Bf16Path::kDots:
          peak.bf16_weight_ops_per_second = peak.bf16_ops_per_second;
          break;
        case Bf16Path::kFmas:
          peak.bf16_weight_ops_per_second = peak.f32_ops_per_second;
          break;
        case Bf16Path::kTiles:
          peak.bf16_weight_ops_per_second = peak.amx_bf16_ops_per_second;
          break;
      }
      break;
    case Isa::kAvx2:
      peak.int8_ops_per_second = Measure(pool, seconds, kOpsPerInt8Step256, Int8DotLoopAvx2);
      peak.f32_ops_per_second = Measure(pool, seconds, kOpsPerFma256, F32FmaLoopAvx2);
      peak.bf16_weight_path = Bf16PathName(Bf16Path::kFmas);
      peak.bf16_weight_ops_per_second = peak.f32_ops_per_second;
      break;
    case Isa::kNeon:
    case Isa::kNeonDotprod:
    case Isa::kNeonI8mm:
    case Isa::kScalar:
      break;
  }
  return peak;
}

}  // namespace vllm::kernels
