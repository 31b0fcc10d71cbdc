// AVX2 SiLU · up, GELU(tanh) · up and GELU(erf) (activations_lanes.h) on lanes_avx2.h's 8 lanes.
#include "kernels/cpu/activations_lanes.h"
#include "kernels/cpu/lanes_avx2.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {

void GeluErfAvx2(const float* x, int64_t n, float* out) { GeluErfLanes<Avx2Lanes>(x, n, out); }

void SiluMulAvx2(const float* gate, const float* up, int64_t n, float* out) {
  SiluMulLanes<Avx2Lanes>(gate, up, n, out);
}

void GeluTanhMulAvx2(const float* gate, const float* up, int64_t n, float* out) {
  GeluTanhMulLanes<Avx2Lanes>(gate, up, n, out);
}

}  // namespace vllm::kernels
