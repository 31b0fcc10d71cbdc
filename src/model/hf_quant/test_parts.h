// Tests of the quantized-linear converters: one layer's stored parts built in memory, and the
// converted weight dequantized back to f32.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/ops.h"
#include "model/hf_quant/quantized_linear.h"

namespace vllm::test {

// The parts of one linear layer; each part's bytes live as long as the object.
class LayerParts {
 public:
  explicit LayerParts(std::string module) { layer_.module = std::move(module); }

  // Part `suffix` of safetensors dtype `dtype` holding `values` (element type T matching dtype,
  // or uint16_t bits for F16 / BF16). `num_bytes` defaults to the values' size (less: truncated).
  template <typename T>
  void Add(const std::string& suffix, const std::string& dtype, std::vector<int64_t> shape,
           const std::vector<T>& values, int64_t num_bytes = -1) {
    std::vector<uint8_t>& bytes = storage_.emplace_back(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    SafetensorsTensor& tensor = tensors_.emplace_back();
    tensor.name = layer_.module + "." + suffix;
    tensor.type = *SafetensorsDtypeType(dtype);
    tensor.dtype = dtype;
    tensor.shape = std::move(shape);
    tensor.data = bytes.data();
    tensor.num_bytes = num_bytes >= 0 ? num_bytes : static_cast<int64_t>(bytes.size());
    layer_.parts[suffix] = &tensor;
  }

  const QuantizedLinearTensors& layer() const { return layer_; }

 private:
  QuantizedLinearTensors layer_;
  std::deque<std::vector<uint8_t>> storage_;
  std::deque<SafetensorsTensor> tensors_;
};

// `count` values drawn uniformly from [low, high] (integers) or [low, high) (floats) by an
// mt19937 seeded with `seed`.
template <typename T>
std::vector<T> UniformRandom(int64_t count, T low, T high, uint32_t seed) {
  std::mt19937 rng(seed);
  std::conditional_t<std::is_integral_v<T>, std::uniform_int_distribution<T>,
                     std::uniform_real_distribution<T>>
      value(low, high);
  std::vector<T> values(count);
  for (T& v : values) v = value(rng);
  return values;
}

// A converted weight (ggml shape {cols, rows}) dequantized row by row: [rows, cols].
inline std::vector<float> DequantizeWeight(const OwnedTensor& tensor) {
  const int64_t cols = tensor.shape[0], rows = tensor.shape[1];
  const int64_t row_bytes = RowBytes(*FindSupportedType(tensor.type), cols);
  EXPECT_EQ(static_cast<int64_t>(tensor.bytes.size()), rows * row_bytes);
  std::vector<float> values(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    kernels::DequantizeRow(tensor.type, tensor.bytes.data() + r * row_bytes, cols,
                           values.data() + r * cols);
  }
  return values;
}

// Expects `result` to be an error whose message contains every one of `parts`.
template <typename T>
void ExpectErrorMentions(const Expected<T>& result, const std::vector<std::string>& parts) {
  ASSERT_FALSE(result.ok()) << "expected an error mentioning " << parts.front();
  for (const std::string& part : parts) {
    EXPECT_NE(result.error().find(part), std::string::npos)
        << "'" << result.error() << "' does not mention '" << part << "'";
  }
}

}  // namespace vllm::test
