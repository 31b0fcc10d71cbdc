// AVX-512 SiLU · up, GELU(tanh) · up and GELU(erf) (activations_lanes.h) on exp_avx512.h's 16
// lanes (e^t to about 2e-7 relative); lanes past n are masked.
#include <immintrin.h>

#include "kernels/cpu/activations_lanes.h"
#include "kernels/cpu/exp_avx512.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {

void GeluErfAvx512(const float* x, int64_t n, float* out) { GeluErfLanes<Avx512Lanes>(x, n, out); }

void SiluMulAvx512(const float* gate, const float* up, int64_t n, float* out) {
  SiluMulLanes<Avx512Lanes>(gate, up, n, out);
}

void GeluTanhMulAvx512(const float* gate, const float* up, int64_t n, float* out) {
  GeluTanhMulLanes<Avx512Lanes>(gate, up, n, out);
}

}  // namespace vllm::kernels
