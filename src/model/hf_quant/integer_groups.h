// Integer weights quantized in groups along each row, as GPTQ, AWQ, compressed-tensors and
// bitsandbytes 8-bit store them once unpacked, and their conversion to the smallest kernel type
// that holds them (see quantized_linear.h for the rule).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/thread_pool.h"
#include "model/architecture.h"

namespace vllm {

// W[r][c] = scales[r][c / group_size] · (q[r][c] − zeros[r][c / group_size]).
struct IntegerGroups {
  int64_t rows = 0;            // output features
  int64_t cols = 0;            // input features
  int64_t group_size = 0;      // divides cols
  std::vector<int16_t> q;      // [rows, cols]: codes as stored (unsigned) or signed values
  std::vector<float> scales;   // [rows, cols / group_size]
  std::vector<int16_t> zeros;  // [rows, cols / group_size]; empty: every zero is 0
};

// The weight as OwnedTensor `name` (ggml shape {cols, rows}): Q4_0 when every q − zero fits
// [-8, 7] and groups are multiples of 32 values, Q4_Z when the codes fit [0, 15] and the zeros
// [0, 31], Q4_1 when only the codes do, Q8_0 when every q − zero fits int8, F16 otherwise. Rows are
// split across `pool`'s threads when given (the same bytes either way).
Expected<OwnedTensor> IntegerGroupsToTensor(const IntegerGroups& groups, const std::string& name,
                                            ThreadPool* pool = nullptr);

}  // namespace vllm
