// AttendAllKeys' run-time dispatch and its scalar path.
#include <algorithm>

#include "kernels/attention_internal.h"
#include "kernels/isa.h"

namespace vllm::kernels {

bool HasVectorDenseAttention(int64_t head_dim) {
  return BestIsa() == Isa::kAvx512 && head_dim % 16 == 0;
}

void AttendAllKeysScalar(const DenseAttention& a, float* scratch) {
  float* keys = scratch;                              // [num_keys, head_dim]
  float* values = scratch + a.num_keys * a.head_dim;  // [num_keys, head_dim]
  for (int64_t j = 0; j < a.num_keys; ++j) {
    std::copy_n(a.k + j * a.kv_row_stride, a.head_dim, keys + j * a.head_dim);
    std::copy_n(a.v + j * a.kv_row_stride, a.head_dim, values + j * a.head_dim);
  }
  for (int64_t r = 0; r < a.num_rows; ++r) {
    AttentionRef(a.q + r * a.q_row_stride, keys, values, a.num_keys, a.head_dim, a.scale, 0.0f,
                 nullptr, a.out + r * a.out_row_stride);
  }
}

void AttendAllKeys(const DenseAttention& attention, float* scratch) {
  if (HasVectorDenseAttention(attention.head_dim)) return AttendAllKeysAvx512(attention, scratch);
  AttendAllKeysScalar(attention, scratch);
}

}  // namespace vllm::kernels
