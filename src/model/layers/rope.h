// Rotary position embedding applied in place to query or key heads.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model_config.h"

namespace vllm {

// YaRN context extension (Hugging Face rope_scaling {"rope_type": "yarn", ...}; llama.cpp
// rope.scaling.type "yarn"), with the semantics of transformers' _compute_yarn_parameters.
struct YarnScaling {
  // Context extension ratio, > 0: rope_scaling.factor (GGUF rope.scaling.factor).
  float factor = 1.0f;
  // Context length the model was pretrained at, > 0: rope_scaling.original_max_position_embeddings
  // (GGUF rope.scaling.original_context_length).
  int64_t original_context_length = 0;
  // Frequencies turning more than beta_fast times over the original context keep their value
  // (extrapolation), fewer than beta_slow times are divided by factor (interpolation); a linear
  // ramp in the frequency index blends the ones between.
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
  // mscale and mscale_all_dim (DeepSeek) shape the derived attention factor; 0: absent.
  float mscale = 0.0f;
  float mscale_all_dim = 0.0f;
  float attention_factor = 0.0f;  // multiplies cos and sin; 0: derived (see Rope)
  bool truncate = true;           // floor/ceil the correction range (gpt-oss sets false)
};

class Rope {
 public:
  // freq_factors (optional, [rope_dim / 2]): per-frequency divisors (GGUF rope_freqs.weight).
  Rope(const ModelConfig& config, std::vector<float> freq_factors = {});
  // YaRN over config's rope_dim, rope_theta and rope_style, with b = rope_theta, d = rope_dim,
  // L = yarn.original_context_length:
  //   corr(r) = d · ln(L / (2π r)) / (2 ln b); low = corr(beta_fast), high = corr(beta_slow),
  //   floored / ceiled if truncate, then low = max(low, 0), high = min(high, d - 1), and
  //   high += 0.001 if they are equal;
  //   ramp_i = clamp((i - low) / (high - low), 0, 1) for i in [0, d / 2);
  //   inv_freq_i = b^(-2i/d) · (ramp_i / factor + 1 - ramp_i);
  //   cos and sin are multiplied by config.rope_attn_factor · A, where A = yarn.attention_factor
  //   if set, else get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim) if both are
  //   set, else get_mscale(factor, 1), with get_mscale(s, m) = s <= 1 ? 1 : 0.1 · m · ln(s) + 1.
  // Positions are not scaled: config.rope_position_scale is not read.
  Rope(const ModelConfig& config, const YarnScaling& yarn);

  // x: [num_tokens, num_heads, head_dim]; token t is rotated by angles positions[t] * freq, with
  // cos and sin scaled by attn_factor().
  void Apply(const int32_t* positions, int64_t num_tokens, int64_t num_heads, float* x) const;

  const std::vector<float>& inv_freq() const { return inv_freq_; }  // [rope_dim / 2]
  float attn_factor() const { return attn_factor_; }

 private:
  int64_t head_dim_;
  int64_t rope_dim_;
  float position_scale_;
  float attn_factor_;  // multiplies cos and sin (LongRoPE's and YaRN's attention scaling)
  RopeStyle style_;
  std::vector<float> inv_freq_;  // [rope_dim / 2]
};

// The rotation `config` describes: YaRN when config.rope_yarn_factor > 0 (its other rope_yarn_*
// fields and rope_original_context_length), else plain RoPE with `freq_factors`.
Rope RopeForConfig(const ModelConfig& config, std::vector<float> freq_factors = {});

}  // namespace vllm
