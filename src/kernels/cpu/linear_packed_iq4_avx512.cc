// The packed Q4_0 / Q4_1 / Q4_Z / Q5_0 / Q5_1 / IQ4_NL / IQ4_XS / MXFP4 kernels on AVX-512 VNNI
// (packed_grid_tiles_avx512.h; the grid lookups by vpshufb, for CPUs without AVX512_VBMI).
#include "kernels/cpu/packed_grid_tiles_avx512.h"

namespace vllm::kernels {

void PrepareGridTermsAvx512(PreparedActivations& x) {
  PrepareNibbleTerms<BiasedTerms<kGridBias>>(x);
}

void PrepareQ5_0TermsAvx512(PreparedActivations& x) {
  PrepareNibbleTerms<BiasedTerms<kQ5_0Bias>>(x);
}

void PrepareMinTermsAvx512(PreparedActivations& x) { PrepareNibbleTerms<MinTerms>(x); }

void PrepareZeroPointTermsAvx512(PreparedActivations& x) {
  PrepareNibbleTerms<BiasedTerms<kQ4_ZBias>>(x);
}

void LinearRowsPackedQ4_0Avx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  NibbleRows<PackedIq4NlRecord, Grid<kBiasedQ4_0Grid>::Codes>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedQ4_1Avx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  NibbleRows<PackedQ4_1Record, Q4_1Codes>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedQ4_ZAvx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  NibbleRows<PackedQ4_ZRecord, ZeroPointCodes>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedQ5_0Avx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  NibbleRows<PackedQ5_0Record, FifthBit<PackedQ5_0Record>::Codes>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedQ5_1Avx512(const PackedWeightView& w, const PreparedActivations& x,
                                int64_t row_begin, int64_t row_end, float* y) {
  NibbleRows<PackedQ5_1Record, FifthBit<PackedQ5_1Record>::Codes>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedIq4NlAvx512(const PackedWeightView& w, const PreparedActivations& x,
                                 int64_t row_begin, int64_t row_end, float* y) {
  NibbleRows<PackedIq4NlRecord, Grid<kBiasedIq4NlGrid>::Codes>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedIq4XsAvx512(const PackedWeightView& w, const PreparedActivations& x,
                                 int64_t row_begin, int64_t row_end, float* y) {
  NibbleRows<PackedIq4XsRecord, Grid<kBiasedIq4NlGrid>::Codes>(w, x, row_begin, row_end, y);
}

void LinearRowsPackedMxfp4Avx512(const PackedWeightView& w, const PreparedActivations& x,
                                 int64_t row_begin, int64_t row_end, float* y) {
  NibbleRows<PackedMxfp4Record, Grid<kBiasedMxfp4Grid>::Codes>(w, x, row_begin, row_end, y);
}

}  // namespace vllm::kernels
