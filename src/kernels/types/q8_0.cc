// Q8_0: d q, q int8, 32 values per block (ggml's block_q8_0); its packed form is the Q8 layout
// of pack_quantized.cc (AVX-512 VNNI, read by AVX2 too).
#include "kernels/packed_q8_layout.h"
#include "kernels/quantizers.h"
#include "kernels/types/nibble_blocks.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

void DecodeQ8_0(const void* block, DecodedBlock* out) {
  const auto& b = *static_cast<const BlockQ8_0*>(block);
  std::memcpy(out->q, b.qs, 32);
  SetScale(Fp16ToFp32(b.d), 1, out);
}

// ggml's quantize_row_q8_0_ref: d = max|x| / 127, q = round(x / d) (ties to even here).
void QuantizeBlockQ8_0(const float* x, BlockQ8_0* block) {
  float amax = 0.0f;
  for (int i = 0; i < kQuantBlockSize; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  block->d = Fp32ToFp16(d);
  for (int i = 0; i < kQuantBlockSize; ++i) {
    block->qs[i] = static_cast<int8_t>(internal::RoundToInt(x[i] * id));
  }
}

void QuantizeRowQ8_0(const float* x, int64_t n, void* out) {
  auto* blocks = static_cast<BlockQ8_0*>(out);
  for (int64_t b = 0; b < n / kQuantBlockSize; ++b) {
    QuantizeBlockQ8_0(x + b * kQuantBlockSize, &blocks[b]);
  }
}

}  // namespace

// In place (only weights whose rows do not fill groups of 16) the AVX2 kernel serves both SIMD
// paths; packed, each has its own kernel on the one packing.
TypeTraits Q8_0Entry() {
  return IntegerType<GgmlType::kQ8_0>(
      32, DecodeQ8_0, QuantizeRowQ8_0,
      Q8LayoutForm<GgmlType::kQ8_0>(LinearRowsPackedQ8_0Avx512, PrepareQ8_0Biases,
                                    {PrepareQ8_0TermsAvx2, LinearRowsPackedQ8_0Avx2}),
      LinearRowsQ8_0Q4_0Avx2, LinearRowsQ8_0Q4_0Avx2);
}

}  // namespace vllm::kernels
