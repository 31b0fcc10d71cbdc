#include "kernels/dot_peak.h"

#include <gtest/gtest.h>

#include <string>

#include "kernels/isa.h"

namespace vllm::kernels {
namespace {

// The probe measures what the dispatched path has: int8 and f32 dots on AVX2 and AVX-512, bf16 dots
// on AVX-512 only, AMX tiles where usable, nothing on the scalar path (nor yet on ARM's tiers);
// and the peak of the path BF16 weights take.
TEST(DotPeakTest, MeasuresTheInstructionsOfTheDispatchedPath) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  const DotPeak peak = MeasureDotPeak(pool, 0.01);
  const Isa isa = BestIsa();
  const bool x86_vectors = isa == Isa::kAvx2 || isa == Isa::kAvx512;
  EXPECT_EQ(std::string(peak.isa), IsaName(isa));
  EXPECT_EQ(peak.int8_ops_per_second > 0, x86_vectors);
  EXPECT_EQ(peak.f32_ops_per_second > 0, x86_vectors);
  EXPECT_EQ(peak.bf16_ops_per_second > 0, isa == Isa::kAvx512);
  EXPECT_EQ(peak.amx_bf16_ops_per_second > 0, AmxBf16Usable());
  EXPECT_EQ(peak.bf16_weight_ops_per_second > 0, x86_vectors);
  if (isa == Isa::kAvx512) {
    EXPECT_EQ(std::string(peak.bf16_weight_path), Bf16PathName(Bf16WeightPath()));
  }
}

}  // namespace
}  // namespace vllm::kernels
