// The packed Q4_0 / Q4_1 / Q4_Z / Q5_0 / Q5_1 / IQ4_NL / IQ4_XS / MXFP4 kernels on AVX-512 VNNI
// (packed_grid_tiles_avx512.h; the grid lookups by vpshufb, for CPUs without AVX512_VBMI).
#include "kernels/cpu/packed_grid_tiles_avx512.h"

namespace vllm::kernels {

PackedKernels NibbleKernelsAvx512(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_1:
      return NibbleKernels<PackedQ4_1Record, Q4_1Codes>();
    case GgmlType::kQ4_Z:
      return NibbleKernels<PackedQ4_ZRecord, ZeroPointCodes>();
    case GgmlType::kQ5_0:
      return NibbleKernels<PackedQ5_0Record, FifthBit<PackedQ5_0Record>::Codes>();
    case GgmlType::kQ5_1:
      return NibbleKernels<PackedQ5_1Record, FifthBit<PackedQ5_1Record>::Codes>();
    default:
      return GridKernels(type);
  }
}

}  // namespace vllm::kernels
