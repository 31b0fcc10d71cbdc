// Internal: which SIMD path the kernels use, chosen at run time from the CPU's features.
#pragma once

namespace vllm::kernels {

enum class Isa { kScalar, kAvx2, kAvx512 };

// The best path this CPU supports (VLLM_CPU_ISA caps it).
Isa BestIsa();
const char* IsaName(Isa isa);
// Whether the AVX-512 path multiplies BF16 weights with f32 FMAs rather than vdpbf16ps: where a
// short probe on the first call finds vdpbf16ps doing fewer multiply-adds per second than FMAs
// (half as many on the Intel core of bench/HISTORY.md's 2026-11-25 sessions). Both give the same
// bits (linear_packed_avx512.cc).
bool Bf16DotsOnFma();
// Whether this process may use AMX tiles for BF16 (TDPBF16PS): the CPU has them, the OS saves
// their state, and Linux granted the permission it requires (asked once, here).
bool AmxBf16Usable();

// How the AVX-512 path multiplies BF16 weights: AMX tiles where usable (several times the FMAs'
// rate), else f32 FMAs or vdpbf16ps as Bf16DotsOnFma() finds. The tiles sum a block's products in
// their own way, so their bits differ from the other two (which agree); a process uses one path for
// every batch size.
enum class Bf16Path { kDots, kFmas, kTiles };
Bf16Path Bf16WeightPath();
const char* Bf16PathName(Bf16Path path);

}  // namespace vllm::kernels
