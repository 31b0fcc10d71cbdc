#include "model/hf_quant/integer_groups.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>

#include "common/half.h"
#include "kernels/quant_blocks.h"
#include "model/hf_quant/linear_parts.h"

namespace vllm {
namespace {

enum class GroupsType { kQ4_0, kQ4_Z, kQ4_1, kQ8_0, kF16 };

// The extremes of the codes, of the zeros and of code − zero over some rows' groups.
struct CodeRange {
  int min_diff = std::numeric_limits<int>::max(), max_diff = std::numeric_limits<int>::min();
  int min_code = std::numeric_limits<int>::max(), max_code = std::numeric_limits<int>::min();
  int min_zero = std::numeric_limits<int>::max(), max_zero = std::numeric_limits<int>::min();
  void Merge(const CodeRange& other) {
    min_diff = std::min(min_diff, other.min_diff);
    max_diff = std::max(max_diff, other.max_diff);
    min_code = std::min(min_code, other.min_code);
    max_code = std::max(max_code, other.max_code);
    min_zero = std::min(min_zero, other.min_zero);
    max_zero = std::max(max_zero, other.max_zero);
  }
};

// The extremes over rows [begin, end).
CodeRange RowsCodeRange(const IntegerGroups& groups, int64_t begin, int64_t end) {
  const int64_t num_groups = groups.cols / groups.group_size;
  CodeRange range;
  for (int64_t g = begin * num_groups; g < end * num_groups; ++g) {  // row-major groups of q
    const int16_t* codes = groups.q.data() + g * groups.group_size;
    int16_t group_min = codes[0], group_max = codes[0];
    for (int64_t k = 1; k < groups.group_size; ++k) {
      group_min = std::min(group_min, codes[k]);
      group_max = std::max(group_max, codes[k]);
    }
    const int zero = groups.zeros.empty() ? 0 : groups.zeros[g];
    range.min_zero = std::min(range.min_zero, zero);
    range.max_zero = std::max(range.max_zero, zero);
    range.min_code = std::min<int>(range.min_code, group_min);
    range.max_code = std::max<int>(range.max_code, group_max);
    range.min_diff = std::min(range.min_diff, group_min - zero);
    range.max_diff = std::max(range.max_diff, group_max - zero);
  }
  return range;
}

// The smallest kernel type that holds every value (quantized_linear.h's rule). Minima and maxima
// merge in any order, so the threads' split does not change the choice.
GroupsType ChooseType(const IntegerGroups& groups, ThreadPool* pool) {
  if (groups.group_size % kQuantBlockSize != 0) return GroupsType::kF16;
  CodeRange range;
  std::mutex mutex;
  ForRowRanges(pool, groups.rows, [&](int64_t begin, int64_t end) {
    const CodeRange rows_range = RowsCodeRange(groups, begin, end);
    std::lock_guard<std::mutex> lock(mutex);
    range.Merge(rows_range);
  });
  if (range.min_diff >= -8 && range.max_diff <= 7) return GroupsType::kQ4_0;
  if (range.min_code >= 0 && range.max_code <= 15) {
    const bool zeros_fit = range.min_zero >= 0 && range.max_zero <= kernels::kQ4ZeroPointMask;
    return zeros_fit ? GroupsType::kQ4_Z : GroupsType::kQ4_1;
  }
  if (range.min_diff >= -128 && range.max_diff <= 127) return GroupsType::kQ8_0;
  return GroupsType::kF16;
}

// Writes row `r` in `type`: one block per 32 values, each inside one group.
void WriteRow(const IntegerGroups& groups, GroupsType type, int64_t r, uint8_t* out) {
  const int64_t num_groups = groups.cols / groups.group_size;
  const int16_t* codes = groups.q.data() + r * groups.cols;
  const float* scales = groups.scales.data() + r * num_groups;
  const int16_t* zeros = groups.zeros.empty() ? nullptr : groups.zeros.data() + r * num_groups;
  if (type == GroupsType::kF16) {
    for (int64_t c = 0; c < groups.cols; ++c) {
      const int64_t g = c / groups.group_size;
      const int zero = zeros == nullptr ? 0 : zeros[g];
      const uint16_t value = Fp32ToFp16(scales[g] * static_cast<float>(codes[c] - zero));
      std::memcpy(out + c * sizeof(value), &value, sizeof(value));
    }
    return;
  }
  for (int64_t block = 0; block < groups.cols / kQuantBlockSize; ++block) {
    const int64_t first = block * kQuantBlockSize;
    const int64_t g = first / groups.group_size;
    const int zero = zeros == nullptr ? 0 : zeros[g];
    const int16_t* q = codes + first;
    const uint16_t d = Fp32ToFp16(scales[g]);
    if (type == GroupsType::kQ4_0) {
      kernels::BlockQ4_0 b;
      b.d = d;
      for (int j = 0; j < 16; ++j) {
        b.qs[j] = static_cast<uint8_t>((q[j] - zero + 8) | ((q[j + 16] - zero + 8) << 4));
      }
      std::memcpy(out + block * sizeof(b), &b, sizeof(b));
    } else if (type == GroupsType::kQ4_Z) {
      kernels::BlockQ4_Z b;
      b.d = d;
      b.z = static_cast<uint16_t>(zero);
      for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(q[j] | (q[j + 16] << 4));
      std::memcpy(out + block * sizeof(b), &b, sizeof(b));
    } else if (type == GroupsType::kQ4_1) {
      kernels::BlockQ4_1 b;
      b.d = d;
      b.m = Fp32ToFp16(-scales[g] * static_cast<float>(zero));
      for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(q[j] | (q[j + 16] << 4));
      std::memcpy(out + block * sizeof(b), &b, sizeof(b));
    } else {
      kernels::BlockQ8_0 b;
      b.d = d;
      for (int j = 0; j < kQuantBlockSize; ++j) b.qs[j] = static_cast<int8_t>(q[j] - zero);
      std::memcpy(out + block * sizeof(b), &b, sizeof(b));
    }
  }
}

}  // namespace

Expected<OwnedTensor> IntegerGroupsToTensor(const IntegerGroups& groups, const std::string& name,
                                            ThreadPool* pool) {
  if (groups.rows <= 0 || groups.cols <= 0 || groups.group_size <= 0 ||
      groups.cols % groups.group_size != 0) {
    return Error{"tensor '" + name + "': group size " + std::to_string(groups.group_size) +
                 " does not divide its " + std::to_string(groups.cols) + " input features"};
  }
  const int64_t num_groups = groups.cols / groups.group_size;
  const auto size_error = [&](const char* what, size_t have, int64_t want) {
    return Error{"tensor '" + name + "': " + what + " has " + std::to_string(have) +
                 " values, expected " + std::to_string(want)};
  };
  if (static_cast<int64_t>(groups.q.size()) != groups.rows * groups.cols) {
    return size_error("q", groups.q.size(), groups.rows * groups.cols);
  }
  if (static_cast<int64_t>(groups.scales.size()) != groups.rows * num_groups) {
    return size_error("scales", groups.scales.size(), groups.rows * num_groups);
  }
  if (!groups.zeros.empty() &&
      static_cast<int64_t>(groups.zeros.size()) != groups.rows * num_groups) {
    return size_error("zeros", groups.zeros.size(), groups.rows * num_groups);
  }
  const GroupsType type = ChooseType(groups, pool);
  OwnedTensor tensor;
  tensor.name = name;
  tensor.type = type == GroupsType::kQ4_0   ? GgmlType::kQ4_0
                : type == GroupsType::kQ4_Z ? GgmlType::kQ4_Z
                : type == GroupsType::kQ4_1 ? GgmlType::kQ4_1
                : type == GroupsType::kQ8_0 ? GgmlType::kQ8_0
                                            : GgmlType::kF16;
  tensor.shape = {groups.cols, groups.rows};
  const int64_t row_bytes = RowBytes(*FindSupportedType(tensor.type), groups.cols);
  tensor.bytes.resize(groups.rows * row_bytes);
  ForRowRanges(pool, groups.rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      WriteRow(groups, type, r, tensor.bytes.data() + r * row_bytes);
    }
  });
  return tensor;
}

}  // namespace vllm
