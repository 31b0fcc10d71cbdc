// F32: plain 32-bit floats, used in place (x stays f32).
#include <algorithm>

#include "kernels/types/type_entry.h"

namespace vllm::kernels {
namespace {

void QuantizeRowF32(const float* x, int64_t n, void* out) {
  std::copy(x, x + n, static_cast<float*>(out));
}
void DequantizeRowF32(const void* row, int64_t n, float* out) {
  std::copy_n(static_cast<const float*>(row), n, out);
}

}  // namespace

TypeTraits F32Entry() {
  return FloatType(GgmlType::kF32, ActivationFormat::kF32, DequantizeRowF32, QuantizeRowF32);
}

}  // namespace vllm::kernels
