// The NEON + dotprod tier (ARMv8.2-A SDOT, built with -march=armv8.2-a+dotprod; reached only where
// the CPU reports it): every integer type in place, each 16-value dot one SDOT.
#include <arm_neon.h>

#include "kernels/cpu/decoded_rows_neon.h"
#include "kernels/linear_internal.h"

namespace vllm::kernels {

void LinearRowsDecodedDotprod(const WeightView& w, const PreparedActivations& x, int64_t row_begin,
                              int64_t row_end, float* y) {
  DecodedRows<DecodedChunkNeon>(w, x, row_begin, row_end, y, [](int8x16_t wq, int8x16_t xq) {
    return vaddvq_s32(vdotq_s32(vdupq_n_s32(0), wq, xq));
  });
}

}  // namespace vllm::kernels
