// Small helpers the architectures in arch/ share: moving an Expected into a field at load, and
// row-wise operations on f32 activation buffers ([num_rows, width], row-major).
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "common/expected.h"

namespace vllm {

// *out = *value, or value's error.
template <typename T>
Status Assign(Expected<T> value, T* out) {
  if (!value) return Error{value.error()};
  *out = std::move(*value);
  return Status::Ok();
}

// x: [num_rows, bias.size()] += bias on every row.
inline void AddRowBias(const std::vector<float>& bias, int64_t num_rows, float* x) {
  const size_t width = bias.size();
  for (int64_t r = 0; r < num_rows; ++r) {
    for (size_t i = 0; i < width; ++i) x[r * width + i] += bias[i];
  }
}

struct ColumnRange {
  float* out;  // [num_rows, width]
  int64_t width;
};
// rows: [num_rows, Σ widths] → each range's columns, in order, into its own buffer.
inline void SplitColumns(const float* rows, int64_t num_rows,
                         std::initializer_list<ColumnRange> ranges) {
  int64_t row_width = 0;
  for (const ColumnRange& range : ranges) row_width += range.width;
  for (int64_t r = 0; r < num_rows; ++r) {
    const float* in = rows + r * row_width;
    for (const ColumnRange& range : ranges) {
      std::copy(in, in + range.width, range.out + r * range.width);
      in += range.width;
    }
  }
}

}  // namespace vllm
