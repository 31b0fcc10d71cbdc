// Internal: which SIMD path the kernels use, chosen at run time from the CPU's features.
#pragma once

namespace vllm::kernels {

enum class Isa { kScalar, kAvx2, kAvx512 };

// The best path this CPU supports (VLLM_CPU_ISA caps it).
Isa BestIsa();
const char* IsaName(Isa isa);

}  // namespace vllm::kernels
