// The BF16 row conversions (quantize.cc), shared by the BF16 type (types/bf16.cc) and the
// activations BF16 weights take. Each converts one row of n values; bf16 rounds to nearest even.
#pragma once

#include <cstdint>

namespace vllm::kernels {

void QuantizeRowBf16(const float* x, int64_t n, void* out);
void DequantizeRowBf16(const void* row, int64_t n, float* out);

}  // namespace vllm::kernels
