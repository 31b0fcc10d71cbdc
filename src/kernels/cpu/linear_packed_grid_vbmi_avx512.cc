// The packed Q4_0 / IQ4_NL / IQ4_XS / MXFP4 kernels with AVX512_VBMI (packed_grid_tiles_avx512.h):
// the grid lookup by vpermb on unmasked nibbles, two vector operations fewer per weight vector.
// Chosen at load where the CPU has VBMI; the same bits as the vpshufb kernels.
#include "kernels/cpu/packed_grid_tiles_avx512.h"

namespace vllm::kernels {

PackedKernels GridKernelsVbmi(GgmlType type) { return GridKernels(type); }

}  // namespace vllm::kernels
