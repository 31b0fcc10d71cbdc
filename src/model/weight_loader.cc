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
  auto weight = kernels::LinearWeight::Create((*tensor)->type, (*tensor)->data, rows, cols);
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
