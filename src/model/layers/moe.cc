#include "model/layers/moe.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "model/layers/tensor_ops.h"

namespace vllm {

namespace {

// The .bias of an expert tensor ("…_exps.weight" → "…_exps.bias": [num_experts * width]), or
// empty when the layer has none.
Status LoadExpertBias(WeightLoader& loader, const std::string& weight_name, int64_t num_experts,
                      int64_t width, std::vector<float>* out) {
  const std::string name = weight_name.substr(0, weight_name.size() - 6) + "bias";
  if (!loader.Has(name)) return Status::Ok();
  auto tensor = loader.Tensor(name, {width, num_experts});
  if (!tensor) return Error{tensor.error()};
  out->resize(num_experts * width);
  kernels::DequantizeRow((*tensor)->type, (*tensor)->data, num_experts * width, out->data());
  return Status::Ok();
}

// gpt-oss's expert activation over n values: gate clamped to ≤ limit, up to [-limit, limit].
void ClampedSwiglu(const float* gate, const float* up, int64_t n, float* out) {
  constexpr float kAlpha = 1.702f, kLimit = 7.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], kLimit);
    const float u = std::clamp(up[i], -kLimit, kLimit);
    out[i] = g / (1.0f + std::exp(-kAlpha * g)) * (u + 1.0f);
  }
}

// x: [num_rows, width] += expert e's row of `biases` ([num_experts, width]; empty: none).
void AddExpertBias(const std::vector<float>& biases, int64_t e, int64_t width, int64_t num_rows,
                   float* x) {
  if (biases.empty()) return;
  for (int64_t r = 0; r < num_rows; ++r) {
    for (int64_t i = 0; i < width; ++i) x[r * width + i] += biases[e * width + i];
  }
}

}  // namespace

Expected<MoeFeedForward> MoeFeedForward::Load(WeightLoader& loader, const std::string& prefix,
                                              const ModelConfig& config,
                                              ExpertActivation activation) {
  const int64_t hidden = config.hidden_size;
  const int64_t num_experts = config.num_experts;
  const int64_t expert_ffn = config.expert_intermediate_size;
  MoeFeedForward moe;
  moe.hidden_ = hidden;
  moe.expert_ffn_ = expert_ffn;
  moe.num_experts_per_token_ = config.num_experts_per_token;
  moe.normalize_top_k_ = config.moe_normalize_top_k;
  moe.activation_ = activation;
  VLLM_RETURN_IF_ERROR(
      Assign(loader.Linear(prefix + "ffn_gate_inp.weight", num_experts, hidden), &moe.router_));
  if (loader.Has(prefix + "ffn_gate_inp.bias")) {
    VLLM_RETURN_IF_ERROR(
        Assign(loader.Vector(prefix + "ffn_gate_inp.bias", num_experts), &moe.router_bias_));
  }
  VLLM_RETURN_IF_ERROR(LoadExpertBias(loader, prefix + "ffn_gate_exps.weight", num_experts,
                                      expert_ffn, &moe.biases_.gate));
  VLLM_RETURN_IF_ERROR(LoadExpertBias(loader, prefix + "ffn_up_exps.weight", num_experts,
                                      expert_ffn, &moe.biases_.up));
  VLLM_RETURN_IF_ERROR(LoadExpertBias(loader, prefix + "ffn_down_exps.weight", num_experts, hidden,
                                      &moe.biases_.down));
  std::vector<std::unique_ptr<kernels::LinearWeight>> gates, ups, downs;
  VLLM_RETURN_IF_ERROR(
      Assign(loader.ExpertLinears(prefix + "ffn_gate_exps.weight", num_experts, expert_ffn, hidden),
             &gates));
  VLLM_RETURN_IF_ERROR(Assign(
      loader.ExpertLinears(prefix + "ffn_up_exps.weight", num_experts, expert_ffn, hidden), &ups));
  VLLM_RETURN_IF_ERROR(
      Assign(loader.ExpertLinears(prefix + "ffn_down_exps.weight", num_experts, hidden, expert_ffn),
             &downs));
  moe.experts_.resize(num_experts);
  for (int64_t e = 0; e < num_experts; ++e) {
    moe.experts_[e] = {std::move(gates[e]), std::move(ups[e]), std::move(downs[e])};
  }
  return moe;
}

void MoeFeedForward::Forward(const float* x, int64_t num_tokens, ThreadPool& pool,
                             float* out) const {
  const int64_t num_experts = static_cast<int64_t>(experts_.size());
  // router_logits: [num_tokens, num_experts]
  std::vector<float> router_logits(num_tokens * num_experts);
  kernels::Linear(*router_, x, num_tokens, router_logits.data(), pool);
  if (!router_bias_.empty()) AddRowBias(router_bias_, num_tokens, router_logits.data());

  // Routing: per expert, the tokens sent to it and their renormalized weights.
  std::vector<std::vector<int64_t>> expert_tokens(num_experts);
  std::vector<std::vector<float>> expert_weights(num_experts);
  std::vector<float> probs(num_experts);
  std::vector<int64_t> ranked(num_experts);
  for (int64_t t = 0; t < num_tokens; ++t) {
    const float* logits = router_logits.data() + t * num_experts;
    const float max_logit = *std::max_element(logits, logits + num_experts);
    float sum = 0.0f;
    for (int64_t e = 0; e < num_experts; ++e) {
      probs[e] = std::exp(logits[e] - max_logit);
      sum += probs[e];
    }
    for (float& p : probs) p /= sum;
    std::iota(ranked.begin(), ranked.end(), 0);
    std::partial_sort(ranked.begin(), ranked.begin() + num_experts_per_token_, ranked.end(),
                      [&](int64_t a, int64_t b) { return probs[a] > probs[b]; });
    float chosen_sum = 1.0f;
    if (normalize_top_k_) {
      chosen_sum = 0.0f;
      for (int64_t k = 0; k < num_experts_per_token_; ++k) chosen_sum += probs[ranked[k]];
    }
    for (int64_t k = 0; k < num_experts_per_token_; ++k) {
      expert_tokens[ranked[k]].push_back(t);
      expert_weights[ranked[k]].push_back(probs[ranked[k]] / chosen_sum);
    }
  }

  std::fill(out, out + num_tokens * hidden_, 0.0f);
  // For an expert's n tokens: gathered: [n, hidden], gate/up: [n, expert_ffn],
  // expert_out: [n, hidden].
  std::vector<float> gathered, gate, up, expert_out;
  for (int64_t e = 0; e < num_experts; ++e) {
    const std::vector<int64_t>& tokens = expert_tokens[e];
    if (tokens.empty()) continue;
    const int64_t n = static_cast<int64_t>(tokens.size());
    gathered.resize(n * hidden_);
    gate.resize(n * expert_ffn_);
    up.resize(n * expert_ffn_);
    expert_out.resize(n * hidden_);
    for (int64_t i = 0; i < n; ++i) {
      std::copy(x + tokens[i] * hidden_, x + (tokens[i] + 1) * hidden_,
                gathered.data() + i * hidden_);
    }
    const Expert& expert = experts_[e];
    kernels::Linear(*expert.gate, gathered.data(), n, gate.data(), pool);
    kernels::Linear(*expert.up, gathered.data(), n, up.data(), pool);
    AddExpertBias(biases_.gate, e, expert_ffn_, n, gate.data());
    AddExpertBias(biases_.up, e, expert_ffn_, n, up.data());
    if (activation_ == ExpertActivation::kSilu) {
      kernels::SiluMul(gate.data(), up.data(), n * expert_ffn_, gate.data());
    } else {
      ClampedSwiglu(gate.data(), up.data(), n * expert_ffn_, gate.data());
    }
    kernels::Linear(*expert.down, gate.data(), n, expert_out.data(), pool);
    AddExpertBias(biases_.down, e, hidden_, n, expert_out.data());
    for (int64_t i = 0; i < n; ++i) {
      kernels::AxpyF32(expert_weights[e][i], expert_out.data() + i * hidden_, hidden_,
                       out + tokens[i] * hidden_);
    }
  }
}

}  // namespace vllm
