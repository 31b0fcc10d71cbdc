// One weight of an F32 / F16 / BF16 row as f32: how the scalar reference reads every column and
// the SIMD paths the columns past their last full vector (so both read the same values).
#pragma once

#include <cstdint>

#include "common/ggml_type.h"
#include "common/half.h"

namespace vllm::kernels {

inline float FloatWeightAt(GgmlType type, const uint8_t* row, int64_t c) {
  switch (type) {
    case GgmlType::kF32:
      return reinterpret_cast<const float*>(row)[c];
    case GgmlType::kF16:
      return Fp16ToFp32(reinterpret_cast<const uint16_t*>(row)[c]);
    default:  // BF16
      return Bf16ToFp32(reinterpret_cast<const uint16_t*>(row)[c]);
  }
}

}  // namespace vllm::kernels
