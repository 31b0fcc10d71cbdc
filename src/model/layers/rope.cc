#include "model/layers/rope.h"

#include <cmath>

namespace vllm {

Rope::Rope(const ModelConfig& config, std::vector<float> freq_factors)
    : head_dim_(config.head_dim),
      rope_dim_(config.rope_dim),
      position_scale_(config.rope_position_scale),
      attn_factor_(config.rope_attn_factor),
      style_(config.rope_style),
      inv_freq_(config.rope_dim / 2) {
  for (int64_t i = 0; i < rope_dim_ / 2; ++i) {
    inv_freq_[i] = std::pow(config.rope_theta, -2.0f * static_cast<float>(i) / rope_dim_);
    if (!freq_factors.empty()) inv_freq_[i] /= freq_factors[i];
  }
}

void Rope::Apply(const int32_t* positions, int64_t num_tokens, int64_t num_heads, float* x) const {
  const int64_t half = rope_dim_ / 2;
  std::vector<float> cos_values(half);
  std::vector<float> sin_values(half);
  for (int64_t t = 0; t < num_tokens; ++t) {
    float position = static_cast<float>(positions[t]) * position_scale_;
    for (int64_t i = 0; i < half; ++i) {
      float angle = position * inv_freq_[i];
      cos_values[i] = std::cos(angle) * attn_factor_;
      sin_values[i] = std::sin(angle) * attn_factor_;
    }
    for (int64_t h = 0; h < num_heads; ++h) {
      float* head = x + (t * num_heads + h) * head_dim_;
      for (int64_t i = 0; i < half; ++i) {
        // Interleaved pairs (2i, 2i+1); NeoX pairs (i, i + half).
        int64_t first = style_ == RopeStyle::kInterleaved ? 2 * i : i;
        int64_t second = style_ == RopeStyle::kInterleaved ? 2 * i + 1 : i + half;
        float a = head[first];
        float b = head[second];
        head[first] = a * cos_values[i] - b * sin_values[i];
        head[second] = a * sin_values[i] + b * cos_values[i];
      }
    }
  }
}

}  // namespace vllm
