#include "kernels/isa.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "common/cpu_features.h"

namespace vllm::kernels {

Isa BestIsa() {
  static const Isa isa = [] {
    const CpuFeatures& features = GetCpuFeatures();
    if (features.HasAvx512Path() && features.avx512vnni && features.avx512bf16) {
      return Isa::kAvx512;
    }
    if (features.HasAvx2Path()) return Isa::kAvx2;
    if (features.i8mm) return Isa::kNeonI8mm;
    if (features.dotprod) return Isa::kNeonDotprod;
    if (features.neon) return Isa::kNeon;
    return Isa::kScalar;
  }();
  return isa;
}

bool AmxBf16Usable() {
#if !defined(__x86_64__)
  return false;
#else
  static const bool usable = [] {
    const CpuFeatures& features = GetCpuFeatures();
    // The AMX translation units also use AVX512DQ (vreduceps), which every AMX CPU has.
    if (BestIsa() != Isa::kAvx512 || !features.amx_bf16 || !features.avx512dq) return false;
    // Linux (5.16 on) allocates the tile data state only for processes that ask for it.
    constexpr int kArchRequestXcompPermission = 0x1023;
    constexpr int kXfeatureTileData = 18;
    return syscall(SYS_arch_prctl, kArchRequestXcompPermission, kXfeatureTileData) == 0;
  }();
  return usable;
#endif
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kNeon:
      return "neon";
    case Isa::kNeonDotprod:
      return "dotprod";
    case Isa::kNeonI8mm:
      return "i8mm";
  }
  return "?";
}

const char* Bf16PathName(Bf16Path path) {
  switch (path) {
    case Bf16Path::kDots:
      return "bf16 dots";
    case Bf16Path::kFmas:
      return "f32 FMAs";
    case Bf16Path::kTiles:
      return "AMX tiles";
  }
  return "?";
}

}  // namespace vllm::kernels
