// Internal: which SIMD path the kernels use, chosen at run time from the CPU's features.
#pragma once

namespace vllm::kernels {

enum class Isa { kScalar, kAvx2, kAvx512 };

// The best path this CPU supports (VLLM_CPU_ISA caps it).
Isa BestIsa();
const char* IsaName(Isa isa);
// Whether the AVX-512 path multiplies BF16 weights with f32 FMAs rather than vdpbf16ps: where a
// short probe on the first call finds vdpbf16ps doing fewer multiply-adds per second than FMAs
// (half as many on the Intel core of bench/RESULTS.md's 2026-11-25 section). Both give the same
// bits (linear_packed_avx512.cc).
bool Bf16DotsOnFma();

}  // namespace vllm::kernels
