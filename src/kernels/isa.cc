#include "kernels/isa.h"

#include "common/cpu_features.h"

namespace vllm::kernels {

Isa BestIsa() {
  static const Isa isa = [] {
    const CpuFeatures& features = GetCpuFeatures();
    if (features.HasAvx512Path() && features.avx512vnni && features.avx512bf16) {
      return Isa::kAvx512;
    }
    if (features.HasAvx2Path()) return Isa::kAvx2;
    return Isa::kScalar;
  }();
  return isa;
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "?";
}

}  // namespace vllm::kernels
