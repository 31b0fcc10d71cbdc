#include "model/layers/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace vllm {

namespace {

// 0.1 · m · ln(s) + 1 for s > 1, else 1 (transformers' get_mscale).
double YarnMscale(double scale, double mscale) {
  return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

}  // namespace

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

Rope::Rope(const ModelConfig& config, const YarnScaling& yarn)
    : head_dim_(config.head_dim),
      rope_dim_(config.rope_dim),
      position_scale_(1.0f),
      style_(config.rope_style),
      inv_freq_(config.rope_dim / 2) {
  const double dim = static_cast<double>(rope_dim_);
  const double base = config.rope_theta;
  const double factor = yarn.factor;
  // The dimension index at which a frequency turns `rotations` times over the original context.
  auto correction_dim = [&](double rotations) {
    return dim *
           std::log(static_cast<double>(yarn.original_context_length) /
                    (rotations * 2.0 * std::numbers::pi)) /
           (2.0 * std::log(base));
  };
  double low = correction_dim(yarn.beta_fast);
  double high = correction_dim(yarn.beta_slow);
  if (yarn.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, dim - 1.0);
  if (low == high) high += 0.001;
  for (int64_t i = 0; i < rope_dim_ / 2; ++i) {
    const double pos_freq = std::pow(base, 2.0 * static_cast<double>(i) / dim);
    const double extrapolation = 1.0 / pos_freq;
    const double interpolation = 1.0 / (factor * pos_freq);
    // 0 up to `low` (extrapolate: keep the frequency), 1 from `high` on (interpolate: divide it).
    const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
    inv_freq_[i] = static_cast<float>(interpolation * ramp + extrapolation * (1.0 - ramp));
  }
  double attention_factor = yarn.attention_factor;
  if (attention_factor == 0.0) {
    attention_factor =
        yarn.mscale != 0.0f && yarn.mscale_all_dim != 0.0f
            ? YarnMscale(factor, yarn.mscale) / YarnMscale(factor, yarn.mscale_all_dim)
            : YarnMscale(factor, 1.0);
  }
  attn_factor_ = static_cast<float>(config.rope_attn_factor * attention_factor);
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

Rope RopeForConfig(const ModelConfig& config, std::vector<float> freq_factors) {
  if (config.rope_yarn_factor <= 0) return Rope(config, std::move(freq_factors));
  return Rope(config, YarnScaling{.factor = config.rope_yarn_factor,
                                  .original_context_length = config.rope_original_context_length,
                                  .beta_fast = config.rope_yarn_beta_fast,
                                  .beta_slow = config.rope_yarn_beta_slow,
                                  .truncate = config.rope_yarn_truncate});
}

}  // namespace vllm
