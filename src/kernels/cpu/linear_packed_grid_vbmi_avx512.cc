// The packed Q4_0 / IQ4_NL / IQ4_XS / MXFP4 kernels with AVX512_VBMI (packed_grid_tiles_avx512.h):
// the grid lookup by vpermb on unmasked nibbles, two vector operations fewer per weight vector.
// Chosen at load where the CPU has VBMI; the same bits as the vpshufb kernels.
#include "kernels/cpu/packed_grid_tiles_avx512.h"

namespace vllm::kernels {

void PrepareGridTermsVbmi(PreparedActivations& x) { PrepareNibbleTerms<BiasedTerms<kGridBias>>(x); }

void LinearRowsPackedQ4_0Vbmi(const PackedWeightView& w, const PreparedActivations& x,
                              int64_t row_begin, int64_t row_end, float* y) {
  NibbleRows<PackedIq4NlRecord, Grid<kBiasedQ4_0Grid>::Codes>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedIq4NlVbmi(const PackedWeightView& w, const PreparedActivations& x,
                               int64_t row_begin, int64_t row_end, float* y) {
  NibbleRows<PackedIq4NlRecord, Grid<kBiasedIq4NlGrid>::Codes>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedIq4XsVbmi(const PackedWeightView& w, const PreparedActivations& x,
                               int64_t row_begin, int64_t row_end, float* y) {
  NibbleRows<PackedIq4XsRecord, Grid<kBiasedIq4NlGrid>::Codes>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedMxfp4Vbmi(const PackedWeightView& w, const PreparedActivations& x,
                               int64_t row_begin, int64_t row_end, float* y) {
  NibbleRows<PackedMxfp4Record, Grid<kBiasedMxfp4Grid>::Codes>(w, x, row_begin, row_end, y);
}

}  // namespace vllm::kernels
