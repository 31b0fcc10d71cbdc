// NEON SiLU · up, GELU(tanh) · up and GELU(erf) (activations_lanes.h) on lanes_neon.h's 4 lanes.
#include "kernels/cpu/activations_lanes.h"
#include "kernels/cpu/lanes_neon.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {

void GeluErfNeon(const float* x, int64_t n, float* out) { GeluErfLanes<NeonLanes>(x, n, out); }

void SiluMulNeon(const float* gate, const float* up, int64_t n, float* out) {
  SiluMulLanes<NeonLanes>(gate, up, n, out);
}

void GeluTanhMulNeon(const float* gate, const float* up, int64_t n, float* out) {
  GeluTanhMulLanes<NeonLanes>(gate, up, n, out);
}

}  // namespace vllm::kernels
