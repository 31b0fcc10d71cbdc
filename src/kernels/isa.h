// Internal: which SIMD path the kernels use, chosen at run time from the CPU's features.
#pragma once

namespace vllm::kernels {

// x86 tiers, then 64-bit ARM's: NEON (every aarch64 CPU), NEON with the int8 dot products
// (dotprod, ARMv8.2), NEON with the int8 matrix multiply-accumulates too (i8mm, ARMv8.6). A build
// has the kernels of its own architecture's tiers only; BestIsa() never picks another's.
enum class Isa { kScalar, kAvx2, kAvx512, kNeon, kNeonDotprod, kNeonI8mm };
// Entries of the per-ISA kernel arrays (indexed by Isa).
inline constexpr int kNumIsas = static_cast<int>(Isa::kNeonI8mm) + 1;

// Mark the declarations of an architecture's kernels: x86's (cpu/*_avx2.cc, *_avx512.cc, *_amx.cc)
// and 64-bit ARM's (cpu/*_neon.cc, *_dotprod.cc), each built on its own architecture only.
// Elsewhere the mark makes a declaration weak, so the type table's entries and the dispatchers'
// switches that name the kernel link with nullptr in its place: code BestIsa() never reaches there.
#if defined(__x86_64__)
#define VLLM_X86_KERNEL
#else
#define VLLM_X86_KERNEL [[gnu::weak]]
#endif
#if defined(__aarch64__)
#define VLLM_ARM_KERNEL
#else
#define VLLM_ARM_KERNEL [[gnu::weak]]
#endif

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
