// F16: IEEE half floats (x stays f32); packed in the Q8 layout of pack_quantized.cc for AVX-512
// and AVX2.
#include "common/half.h"
#include "kernels/packed_q8_layout.h"
#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

// Rounds to nearest even.
void QuantizeRowF16(const float* x, int64_t n, void* out) {
  auto* halves = static_cast<uint16_t*>(out);
  for (int64_t i = 0; i < n; ++i) halves[i] = Fp32ToFp16(x[i]);
}
void DequantizeRowF16(const void* row, int64_t n, float* out) {
  const auto* halves = static_cast<const uint16_t*>(row);
  for (int64_t i = 0; i < n; ++i) out[i] = Fp16ToFp32(halves[i]);
}

}  // namespace

TypeTraits F16Entry() {
  return FloatType(GgmlType::kF16, ActivationFormat::kF32, DequantizeRowF16, QuantizeRowF16,
                   Q8LayoutForm<GgmlType::kF16>(LinearRowsPackedF16Avx512, nullptr,
                                                {nullptr, LinearRowsPackedF16Avx2}));
}

}  // namespace vllm::kernels
