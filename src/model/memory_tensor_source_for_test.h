// Test helper shared by the model tests: tensors held in memory, found by name as a GGUF file's
// would be, with input orders for the linear weights that have one.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/tensor_source.h"

namespace vllm {

// The bytes of f32 `values`, for MemoryTensorSource::Add.
inline std::vector<uint8_t> FloatBytes(const std::vector<float>& values) {
  const auto* begin = reinterpret_cast<const uint8_t*>(values.data());
  return std::vector<uint8_t>(begin, begin + values.size() * sizeof(float));
}

class MemoryTensorSource : public TensorSource {
 public:
  void Add(const std::string& name, GgmlType type, std::vector<int64_t> shape,
           std::vector<uint8_t> bytes) {
    bytes_.push_back(std::move(bytes));
    tensors_.push_back(GgufTensor{.name = name,
                                  .shape = std::move(shape),
                                  .type = type,
                                  .data = bytes_.back().data(),
                                  .num_bytes = static_cast<int64_t>(bytes_.back().size())});
  }
  void SetInputOrder(const std::string& name, std::vector<int32_t> order) {
    input_orders_[name] = std::move(order);
  }
  const GgufTensor* Find(const std::string& name) const override {
    for (const GgufTensor& tensor : tensors_) {
      if (tensor.name == name) return &tensor;
    }
    return nullptr;
  }
  const std::vector<int32_t>* InputOrder(const std::string& name) const override {
    auto it = input_orders_.find(name);
    return it == input_orders_.end() ? nullptr : &it->second;
  }

 private:
  std::vector<std::vector<uint8_t>> bytes_;  // a vector of vectors: data pointers stay put
  std::vector<GgufTensor> tensors_;
  std::map<std::string, std::vector<int32_t>> input_orders_;  // by name
};

}  // namespace vllm
