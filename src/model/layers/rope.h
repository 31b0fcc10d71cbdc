// Rotary position embedding applied in place to query or key heads.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model_config.h"

namespace vllm {

class Rope {
 public:
  // freq_factors (optional, [rope_dim / 2]): per-frequency divisors (GGUF rope_freqs.weight).
  Rope(const ModelConfig& config, std::vector<float> freq_factors = {});

  // x: [num_tokens, num_heads, head_dim]; token t is rotated by angles positions[t] * freq, with
  // cos and sin scaled by config.rope_attn_factor.
  void Apply(const int32_t* positions, int64_t num_tokens, int64_t num_heads, float* x) const;

 private:
  int64_t head_dim_;
  int64_t rope_dim_;
  float position_scale_;
  float attn_factor_;  // multiplies cos and sin (LongRoPE's attention scaling)
  RopeStyle style_;
  std::vector<float> inv_freq_;  // [rope_dim / 2]
};

}  // namespace vllm
