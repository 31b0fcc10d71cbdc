#include "model/hf_quant/linear_parts.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>

#include "kernels/ops.h"

namespace vllm {
namespace {

// Value `index` of an array of `Stored` integers at `data` (the file's byte order, little-endian).
template <typename Stored>
int64_t LoadInteger(const void* data, int64_t index) {
  Stored value;
  std::memcpy(&value, static_cast<const uint8_t*>(data) + index * sizeof(Stored), sizeof(value));
  return static_cast<int64_t>(value);
}

}  // namespace

void ForRowRanges(ThreadPool* pool, int64_t count,
                  const std::function<void(int64_t begin, int64_t end)>& fn) {
  if (count <= 0) return;
  if (pool == nullptr) return fn(0, count);
  constexpr int kChunksPerThread = 4;
  pool->ParallelForChunks(count, kChunksPerThread, fn);
}

std::string PartName(const QuantizedLinearTensors& tensors, const std::string& suffix) {
  return tensors.module + "." + suffix;
}

const SafetensorsTensor* FindPart(const QuantizedLinearTensors& tensors,
                                  const std::string& suffix) {
  auto it = tensors.parts.find(suffix);
  return it == tensors.parts.end() ? nullptr : it->second;
}

Expected<const SafetensorsTensor*> RequirePart(const QuantizedLinearTensors& tensors,
                                               const std::string& suffix) {
  const SafetensorsTensor* part = FindPart(tensors, suffix);
  if (part == nullptr) return Error{"tensor '" + PartName(tensors, suffix) + "' is missing"};
  return part;
}

Expected<const SafetensorsTensor*> RequireMatrixPart(const QuantizedLinearTensors& tensors,
                                                     const std::string& suffix) {
  auto part = RequirePart(tensors, suffix);
  if (!part) return part;
  const std::vector<int64_t>& shape = (*part)->shape;
  if (shape.size() != 2 || shape[0] <= 0 || shape[1] <= 0) {
    return Error{"tensor '" + (*part)->name + "' has shape " + ShapeText(shape) +
                 ", expected a 2-D [out, in] weight"};
  }
  return part;
}

Expected<PackedIntegerParts> RequirePackedIntegerParts(const QuantizedLinearTensors& tensors) {
  auto qweight = RequirePart(tensors, "qweight");
  if (!qweight) return Error{qweight.error()};
  auto qzeros = RequirePart(tensors, "qzeros");
  if (!qzeros) return Error{qzeros.error()};
  auto scales = RequirePart(tensors, "scales");
  if (!scales) return Error{scales.error()};
  return PackedIntegerParts{.qweight = *qweight, .qzeros = *qzeros, .scales = *scales};
}

Expected<int64_t> ResolveGroupSize(const SafetensorsTensor& weight, int64_t in,
                                   int64_t group_size) {
  const int64_t resolved = group_size == -1 ? in : group_size;
  if (resolved <= 0 || in % resolved != 0) {
    return Error{"tensor '" + weight.name + "' holds " + std::to_string(in) +
                 " input features, not a multiple of quantization_config.group_size = " +
                 std::to_string(group_size)};
  }
  return resolved;
}

std::string DtypeName(const SafetensorsTensor& tensor) {
  if (!tensor.dtype.empty()) return tensor.dtype;
  const auto name = SafetensorsDtypeName(tensor.type);
  return name ? std::string(*name) : GgmlTypeName(static_cast<uint32_t>(tensor.type));
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

Status CheckShape(const SafetensorsTensor& tensor, const std::vector<int64_t>& shape) {
  if (tensor.shape == shape) return Status::Ok();
  return Error{"tensor '" + tensor.name + "' has shape " + ShapeText(tensor.shape) + ", expected " +
               ShapeText(shape)};
}

int64_t NumElements(const SafetensorsTensor& tensor) {
  return std::accumulate(tensor.shape.begin(), tensor.shape.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

Expected<std::vector<float>> ReadFloats(const SafetensorsTensor& tensor) {
  if (!IsSafetensorsFloatType(tensor.type)) {
    return Error{"tensor '" + tensor.name + "' has dtype " + DtypeName(tensor) +
                 ", expected F32, F16 or BF16"};
  }
  const int64_t count = NumElements(tensor);
  if (count * SafetensorsElementBytes(tensor.type) != tensor.num_bytes) {
    return Error{"tensor '" + tensor.name + "' holds " + std::to_string(tensor.num_bytes) +
                 " bytes, not the " + std::to_string(count) + " values of shape " +
                 ShapeText(tensor.shape)};
  }
  std::vector<float> values(count);
  // A safetensors tensor is aligned only as far as the file aligns it (after a U8 tensor of odd
  // length, such as bitsandbytes' quant_state, the next one is not): the kernels load whole
  // elements, so a misaligned tensor is read from an aligned copy.
  if (reinterpret_cast<uintptr_t>(tensor.data) % SafetensorsElementBytes(tensor.type) == 0) {
    kernels::DequantizeRow(tensor.type, tensor.data, count, values.data());
  } else {
    std::vector<uint8_t> aligned(tensor.num_bytes);  // new[]: aligned for any element type
    std::memcpy(aligned.data(), tensor.data, aligned.size());
    kernels::DequantizeRow(tensor.type, aligned.data(), count, values.data());
  }
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(values[i])) {
      return Error{"tensor '" + tensor.name + "' holds a non-finite value at index " +
                   std::to_string(i)};
    }
  }
  return values;
}

Expected<std::vector<int64_t>> ReadIntegers(const SafetensorsTensor& tensor) {
  const int64_t count = NumElements(tensor);
  const std::string dtype = DtypeName(tensor);
  if (IsSafetensorsFloatType(tensor.type)) {
    auto floats = ReadFloats(tensor);
    if (!floats) return Error{floats.error()};
    std::vector<int64_t> values(count);
    for (int64_t i = 0; i < count; ++i) {
      // 2^31 bounds every quantized integer and keeps the conversion defined.
      if ((*floats)[i] != std::nearbyint((*floats)[i]) ||
          std::fabs((*floats)[i]) >= 2147483648.0f) {
        return Error{"tensor '" + tensor.name + "' holds " + std::to_string((*floats)[i]) +
                     " at index " + std::to_string(i) + ", not a quantized integer"};
      }
      values[i] = static_cast<int64_t>((*floats)[i]);
    }
    return values;
  }
  int64_t (*load)(const void*, int64_t) = nullptr;
  int64_t element_bytes = 0;
  if (dtype == "I8") {
    load = LoadInteger<int8_t>, element_bytes = 1;
  } else if (dtype == "U8") {
    load = LoadInteger<uint8_t>, element_bytes = 1;
  } else if (dtype == "I16") {
    load = LoadInteger<int16_t>, element_bytes = 2;
  } else if (dtype == "I32") {
    load = LoadInteger<int32_t>, element_bytes = 4;
  } else if (dtype == "I64") {
    load = LoadInteger<int64_t>, element_bytes = 8;
  } else {
    return Error{"tensor '" + tensor.name + "' has dtype " + dtype + ", expected an integer dtype"};
  }
  if (count * element_bytes != tensor.num_bytes) {
    return Error{"tensor '" + tensor.name + "' holds " + std::to_string(tensor.num_bytes) +
                 " bytes, not the " + std::to_string(count) + " values of shape " +
                 ShapeText(tensor.shape)};
  }
  std::vector<int64_t> values(count);
  for (int64_t i = 0; i < count; ++i) values[i] = load(tensor.data, i);
  return values;
}

Expected<std::vector<int16_t>> ReadInt16s(const SafetensorsTensor& tensor) {
  const std::string dtype = DtypeName(tensor);
  if (dtype == "I8" || dtype == "U8") {
    const int64_t count = NumElements(tensor);
    if (count != tensor.num_bytes) {
      return Error{"tensor '" + tensor.name + "' holds " + std::to_string(tensor.num_bytes) +
                   " bytes, not the " + std::to_string(count) + " values of shape " +
                   ShapeText(tensor.shape)};
    }
    const auto* bytes = static_cast<const uint8_t*>(tensor.data);
    std::vector<int16_t> values(count);
    if (dtype == "I8") {
      for (int64_t i = 0; i < count; ++i) values[i] = static_cast<int8_t>(bytes[i]);
    } else {
      for (int64_t i = 0; i < count; ++i) values[i] = bytes[i];
    }
    return values;
  }
  auto wide = ReadIntegers(tensor);
  if (!wide) return Error{wide.error()};
  std::vector<int16_t> values(wide->size());
  for (size_t i = 0; i < wide->size(); ++i) {
    if ((*wide)[i] < INT16_MIN || (*wide)[i] > INT16_MAX) {
      return Error{"tensor '" + tensor.name + "' holds " + std::to_string((*wide)[i]) +
                   " at index " + std::to_string(i) + ", beyond any quantized integer"};
    }
    values[i] = static_cast<int16_t>((*wide)[i]);
  }
  return values;
}

Expected<bool> IsPerTensor(const SafetensorsTensor& tensor, int64_t rows, int64_t num_groups) {
  const std::vector<int64_t>& shape = tensor.shape;
  if (NumElements(tensor) == 1 && shape.size() <= 2) return true;
  const bool per_row = num_groups == 1 && (shape == std::vector<int64_t>{rows} ||
                                           shape == std::vector<int64_t>{rows, 1});
  if (per_row || shape == std::vector<int64_t>{rows, num_groups}) return false;
  return Error{"tensor '" + tensor.name + "' has shape " + ShapeText(shape) + ", expected " +
               ShapeText({rows, num_groups}) +
               (num_groups == 1 ? " (per row) or [1] (per tensor)" : "")};
}

Expected<std::vector<float>> ReadGroupScales(const SafetensorsTensor& scales, int64_t rows,
                                             int64_t num_groups) {
  auto per_tensor = IsPerTensor(scales, rows, num_groups);
  if (!per_tensor) return Error{per_tensor.error()};
  auto values = ReadFloats(scales);
  if (!values) return Error{values.error()};
  if (*per_tensor) values->assign(rows * num_groups, values->front());
  return values;
}

Status CheckInputScale(const SafetensorsTensor& input_scale) {
  if (NumElements(input_scale) != 1 || input_scale.shape.size() > 1) {
    return Error{"tensor '" + input_scale.name + "' has shape " + ShapeText(input_scale.shape) +
                 ", expected one value (a per-tensor activation scale)"};
  }
  auto value = ReadFloats(input_scale);
  if (!value) return Error{value.error()};
  if (!(value->front() > 0.0f)) {
    return Error{"tensor '" + input_scale.name + "' holds " + std::to_string(value->front()) +
                 ", expected a positive activation scale"};
  }
  return Status::Ok();
}

Expected<std::vector<int32_t>> GroupInputOrder(const SafetensorsTensor& group_index, int64_t cols,
                                               int64_t group_size) {
  if (group_index.shape != std::vector<int64_t>{cols}) {
    return Error{"tensor '" + group_index.name + "' has shape " + ShapeText(group_index.shape) +
                 ", expected " + ShapeText({cols})};
  }
  auto groups = ReadIntegers(group_index);
  if (!groups) return Error{groups.error()};
  const int64_t num_groups = cols / group_size;
  std::vector<int64_t> group_counts(num_groups, 0);
  bool contiguous = true;
  for (int64_t c = 0; c < cols; ++c) {
    const int64_t group = (*groups)[c];
    if (group < 0 || group >= num_groups) {
      return Error{"tensor '" + group_index.name + "': group " + std::to_string(group) +
                   " of input column " + std::to_string(c) + " is out of range [0, " +
                   std::to_string(num_groups) + ")"};
    }
    ++group_counts[group];
    contiguous = contiguous && group == c / group_size;
  }
  for (int64_t g = 0; g < num_groups; ++g) {
    if (group_counts[g] != group_size) {
      return Error{"tensor '" + group_index.name + "': group " + std::to_string(g) + " holds " +
                   std::to_string(group_counts[g]) + " input columns, expected " +
                   std::to_string(group_size)};
    }
  }
  if (contiguous) return std::vector<int32_t>();
  std::vector<int32_t> order(cols);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return (*groups)[a] < (*groups)[b]; });
  return order;
}

}  // namespace vllm
