// Scalar reference attention for one query row (see attention_internal.h).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/attention_internal.h"

namespace vllm::kernels {

void AttentionRef(const float* q, const float* keys, const float* values, int64_t num_keys,
                  int64_t head_dim, float scale, float logit_softcap, const float* sink,
                  float* out) {
  std::vector<float> weights(num_keys);  // [num_keys]: logits, then exp(logit - max)
  float max_logit = sink != nullptr ? *sink : -INFINITY;
  for (int64_t j = 0; j < num_keys; ++j) {
    float dot = 0.0f;
    for (int64_t d = 0; d < head_dim; ++d) dot += q[d] * keys[j * head_dim + d];
    float logit = dot * scale;
    if (logit_softcap > 0.0f) logit = logit_softcap * std::tanh(logit / logit_softcap);
    weights[j] = logit;
    max_logit = std::max(max_logit, logit);
  }
  float sum = sink != nullptr ? std::exp(*sink - max_logit) : 0.0f;
  for (float& w : weights) sum += (w = std::exp(w - max_logit));
  std::fill(out, out + head_dim, 0.0f);
  for (int64_t j = 0; j < num_keys; ++j) {
    for (int64_t d = 0; d < head_dim; ++d) out[d] += weights[j] / sum * values[j * head_dim + d];
  }
}

}  // namespace vllm::kernels
