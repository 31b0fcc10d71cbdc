// BF16: bfloat16 (x rounded to bf16 first, with the same row conversion: row_conversions.h);
// packed in the Q8 layout of pack_quantized.cc for AVX-512 and AVX2.
#include "kernels/packed_q8_layout.h"
#include "kernels/row_conversions.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {

TypeTraits Bf16Entry() {
  return FloatType(GgmlType::kBF16, ActivationFormat::kBf16, DequantizeRowBf16, QuantizeRowBf16,
                   Q8LayoutForm<GgmlType::kBF16>(LinearRowsPackedBf16Avx512, nullptr,
                                                 {nullptr, LinearRowsPackedBf16Avx2}));
}

}  // namespace vllm::kernels
