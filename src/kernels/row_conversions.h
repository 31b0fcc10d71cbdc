// Row conversions of the float types and of the Q8_0 / Q4_0 reference quantizers (quantize.cc);
// the other types' quantizers are in quantizers.h. Each converts one row of n values.
#pragma once

#include <cstdint>

namespace vllm::kernels {

void QuantizeRowF32(const float* x, int64_t n, void* out);
void QuantizeRowF16(const float* x, int64_t n, void* out);
void QuantizeRowBf16(const float* x, int64_t n, void* out);
void DequantizeRowF32(const void* row, int64_t n, float* out);
void DequantizeRowF16(const void* row, int64_t n, float* out);
void DequantizeRowBf16(const void* row, int64_t n, float* out);
// ggml's quantize_row_q8_0_ref / quantize_row_q4_0_ref.
void QuantizeRowQ8_0(const float* x, int64_t n, void* out);
void QuantizeRowQ4_0(const float* x, int64_t n, void* out);

}  // namespace vllm::kernels
