#include "model/layers/pooler.h"

#include <algorithm>
#include <cmath>

namespace vllm {

std::vector<float> PoolSequence(PoolingType type, const float* hidden, int64_t num_tokens,
                                int64_t hidden_size) {
  switch (type) {
    case PoolingType::kCls:
      return std::vector<float>(hidden, hidden + hidden_size);
    case PoolingType::kLast:
      return std::vector<float>(hidden + (num_tokens - 1) * hidden_size,
                                hidden + num_tokens * hidden_size);
    case PoolingType::kAll:
      return std::vector<float>(hidden, hidden + num_tokens * hidden_size);
    case PoolingType::kMean: {
      std::vector<float> mean(hidden_size, 0.0f);
      for (int64_t t = 0; t < num_tokens; ++t) {
        for (int64_t i = 0; i < hidden_size; ++i) mean[i] += hidden[t * hidden_size + i];
      }
      for (float& value : mean) value /= static_cast<float>(num_tokens);
      return mean;
    }
    case PoolingType::kUnset:
      break;
  }
  return {};
}

void NormalizeL2(std::span<float> values) {
  float squares = 0.0f;
  for (float value : values) squares += value * value;
  const float inv_norm = 1.0f / std::max(std::sqrt(squares), 1e-12f);
  for (float& value : values) value *= inv_norm;
}

float CosineSimilarity(std::span<const float> a, std::span<const float> b) {
  double dot = 0.0, norm_a = 0.0, norm_b = 0.0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    dot += double{a[i]} * b[i];
    norm_a += double{a[i]} * a[i];
    norm_b += double{b[i]} * b[i];
  }
  return static_cast<float>(dot / std::max(std::sqrt(norm_a) * std::sqrt(norm_b), 1e-8));
}

void SoftmaxInPlace(std::span<float> values) {
  if (values.empty()) return;
  const float max = *std::max_element(values.begin(), values.end());
  float sum = 0.0f;
  for (float& value : values) {
    value = std::exp(value - max);
    sum += value;
  }
  for (float& value : values) value /= sum;
}

void SigmoidInPlace(std::span<float> values) {
  for (float& value : values) value = 1.0f / (1.0f + std::exp(-value));
}

}  // namespace vllm
