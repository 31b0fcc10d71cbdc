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
  std::vector<std::unique_ptr<kernels::LinearWeight>> gate_ups, gates, ups, downs;
  const std::string gate_name = prefix + "ffn_gate_exps.weight";
  const std::string up_name = prefix + "ffn_up_exps.weight";
  VLLM_RETURN_IF_ERROR(Assign(
      loader.FusedExpertLinears(gate_name, up_name, num_experts, expert_ffn, hidden), &gate_ups));
  if (gate_ups.empty()) {
    VLLM_RETURN_IF_ERROR(
        Assign(loader.ExpertLinears(gate_name, num_experts, expert_ffn, hidden), &gates));
    VLLM_RETURN_IF_ERROR(
        Assign(loader.ExpertLinears(up_name, num_experts, expert_ffn, hidden), &ups));
  }
  VLLM_RETURN_IF_ERROR(
      Assign(loader.ExpertLinears(prefix + "ffn_down_exps.weight", num_experts, hidden, expert_ffn),
             &downs));
  moe.experts_.resize(num_experts);
  for (int64_t e = 0; e < num_experts; ++e) {
    Expert& expert = moe.experts_[e];
    if (gate_ups.empty()) {
      expert.gate = std::move(gates[e]);
      expert.up = std::move(ups[e]);
    } else {
      expert.gate_up = std::move(gate_ups[e]);
    }
    expert.down = std::move(downs[e]);
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

  // Per expert chosen by some token, its n tokens: gathered: [n, hidden], gate / up:
  // [n, expert_ffn], fused: [n, 2 expert_ffn], expert_out: [n, hidden].
  struct ExpertWork {
    int64_t expert, n;
    std::vector<float> gathered, gate, up, fused, expert_out;
  };
  std::vector<ExpertWork> work;
  for (int64_t e = 0; e < num_experts; ++e) {
    const std::vector<int64_t>& tokens = expert_tokens[e];
    if (tokens.empty()) continue;
    const int64_t n = static_cast<int64_t>(tokens.size());
    ExpertWork& item = work.emplace_back(ExpertWork{e, n, {}, {}, {}, {}, {}});
    item.gathered.resize(n * hidden_);
    item.gate.resize(n * expert_ffn_);
    item.up.resize(n * expert_ffn_);
    item.expert_out.resize(n * hidden_);
    for (int64_t i = 0; i < n; ++i) {
      std::copy(x + tokens[i] * hidden_, x + (tokens[i] + 1) * hidden_,
                item.gathered.data() + i * hidden_);
    }
  }
  // Every chosen expert's gate/up GEMMs in one parallel region, then every down GEMM.
  std::vector<kernels::LinearJob> jobs;
  for (ExpertWork& item : work) {
    const Expert& expert = experts_[item.expert];
    if (expert.gate_up != nullptr) {
      item.fused.resize(item.n * 2 * expert_ffn_);
      jobs.push_back({expert.gate_up.get(), item.gathered.data(), item.n, item.fused.data()});
    } else {
      jobs.push_back({expert.gate.get(), item.gathered.data(), item.n, item.gate.data()});
      jobs.push_back({expert.up.get(), item.gathered.data(), item.n, item.up.data()});
    }
  }
  kernels::LinearBatch(jobs, pool);
  jobs.clear();
  for (ExpertWork& item : work) {
    if (!item.fused.empty()) {
      SplitColumns(item.fused.data(), item.n,
                   {{item.gate.data(), expert_ffn_}, {item.up.data(), expert_ffn_}});
    }
    AddExpertBias(biases_.gate, item.expert, expert_ffn_, item.n, item.gate.data());
    AddExpertBias(biases_.up, item.expert, expert_ffn_, item.n, item.up.data());
    const int64_t count = item.n * expert_ffn_;
    if (activation_ == ExpertActivation::kSilu) {
      kernels::SiluMul(item.gate.data(), item.up.data(), count, item.gate.data());
    } else {
      ClampedSwiglu(item.gate.data(), item.up.data(), count, item.gate.data());
    }
    jobs.push_back(
        {experts_[item.expert].down.get(), item.gate.data(), item.n, item.expert_out.data()});
  }
  kernels::LinearBatch(jobs, pool);

  // Each token's weighted sum, in expert order (independent of the rest of the batch).
  std::fill(out, out + num_tokens * hidden_, 0.0f);
  for (ExpertWork& item : work) {
    AddExpertBias(biases_.down, item.expert, hidden_, item.n, item.expert_out.data());
    const std::vector<int64_t>& tokens = expert_tokens[item.expert];
    for (int64_t i = 0; i < item.n; ++i) {
      kernels::AxpyF32(expert_weights[item.expert][i], item.expert_out.data() + i * hidden_,
                       hidden_, out + tokens[i] * hidden_);
    }
  }
}

}  // namespace vllm
