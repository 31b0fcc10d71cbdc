#include "kernels/dot_peak.h"

#include <gtest/gtest.h>

#include <string>

#include "kernels/isa.h"

namespace vllm::kernels {
namespace {

// The probe measures what the dispatched path has: int8 and f32 dots on AVX2 and AVX-512, bf16 dots
// on AVX-512 only, nothing on the scalar path.
TEST(DotPeakTest, MeasuresTheInstructionsOfTheDispatchedPath) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  const DotPeak peak = MeasureDotPeak(pool, 0.01);
  const Isa isa = BestIsa();
  EXPECT_EQ(std::string(peak.isa), IsaName(isa));
  EXPECT_EQ(peak.int8_ops_per_second > 0, isa != Isa::kScalar);
  EXPECT_EQ(peak.f32_ops_per_second > 0, isa != Isa::kScalar);
  EXPECT_EQ(peak.bf16_ops_per_second > 0, isa == Isa::kAvx512);
}

}  // namespace
}  // namespace vllm::kernels
