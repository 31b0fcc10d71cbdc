#include "model/weight_loader.h"

namespace vllm {
namespace {
std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}
}  // namespace

Expected<const GgufTensor*> WeightLoader::Tensor(const std::string& name,
                                                 const std::vector<int64_t>& shape) const {
  const GgufTensor* tensor = source_.Find(name);
  if (tensor == nullptr) return Error{"model file is missing tensor '" + name + "'"};
  if (tensor->shape != shape) {
    return Error{"tensor '" + name + "' has shape " + ShapeString(tensor->shape) + ", expected " +
                 ShapeString(shape)};
  }
  return tensor;
}

Expected<std::unique_ptr<kernels::LinearWeight>> WeightLoader::Linear(const std::string& name,
                                                                      int64_t rows, int64_t cols) {
  auto tensor = Tensor(name, {cols, rows});
  if (!tensor) return Error{tensor.error()};
  const GgmlType stored = (*tensor)->type;
  if (linear_type_ && *linear_type_ != stored) {
    // Converted once, row by row through f32.
    auto traits = GetSupportedTypeTraits(*linear_type_);
    if (!traits || cols % traits->block_size != 0) {
      return Error{"tensor '" + name + "' cannot be converted to " +
                   GgmlTypeName(static_cast<uint32_t>(*linear_type_))};
    }
    const int64_t row_bytes = RowBytes(*traits, cols);
    const int64_t stored_row_bytes = (*tensor)->num_bytes / rows;
    std::vector<uint8_t> bytes(rows * row_bytes);
    std::vector<float> row(cols);
    for (int64_t r = 0; r < rows; ++r) {
      kernels::DequantizeRow(stored, (*tensor)->data + r * stored_row_bytes, cols, row.data());
      kernels::QuantizeRow(*linear_type_, row.data(), cols, bytes.data() + r * row_bytes);
    }
    linear_bytes_ += static_cast<int64_t>(bytes.size());
    auto weight = kernels::LinearWeight::CreateOwned(*linear_type_, std::move(bytes), rows, cols);
    if (!weight) return Error{"tensor '" + name + "': " + weight.error()};
    return weight;
  }
  auto weight = kernels::LinearWeight::Create(stored, (*tensor)->data, rows, cols);
  if (!weight) return Error{"tensor '" + name + "': " + weight.error()};
  linear_bytes_ += (*tensor)->num_bytes;
  return weight;
}

Expected<std::vector<float>> WeightLoader::Vector(const std::string& name, int64_t size) const {
  auto tensor = Tensor(name, {size});
  if (!tensor) return Error{tensor.error()};
  std::vector<float> values(size);
  kernels::DequantizeRow((*tensor)->type, (*tensor)->data, size, values.data());
  return values;
}

}  // namespace vllm
