// Sparse mixture-of-experts gated feed-forward block (Mixtral, Qwen3-MoE, gpt-oss): a router
// (with a bias when the layer has ffn_gate_inp.bias) picks each token's top-k experts from a
// softmax over all of them, renormalizes the k weights to sum to 1 (config.moe_normalize_top_k;
// equal to gpt-oss's softmax over the k chosen logits) and sums the chosen experts' outputs with
// those weights. Tokens are grouped by expert so that each expert runs its gate, up and down GEMMs
// once over all the tokens routed to it; experts no token chose are not read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/expected.h"
#include "common/thread_pool.h"
#include "kernels/ops.h"
#include "model/model_config.h"
#include "model/weight_loader.h"

namespace vllm {

// An expert's act(gate) * up.
enum class ExpertActivation {
  kSilu,  // silu(gate) * up
  // gpt-oss: gate clamped to ≤ 7, up to [-7, 7], then gate * sigmoid(1.702 gate) * (up + 1)
  kClampedSwiglu,
};

class MoeFeedForward {
 public:
  // Reads `prefix` + ffn_gate_inp.weight (router: [num_experts, hidden]) and ffn_{gate,up}_exps
  // ([num_experts] × [expert_ffn, hidden]) and ffn_down_exps ([num_experts] × [hidden,
  // expert_ffn]) — or the per-expert ffn_{gate,up,down}.<e>.weight of older Mixtral files and of
  // Hugging Face checkpoints — and the .bias of each when present.
  static Expected<MoeFeedForward> Load(WeightLoader& loader, const std::string& prefix,
                                       const ModelConfig& config, ExpertActivation activation);

  // x: [num_tokens, hidden] → out: [num_tokens, hidden] (overwritten).
  void Forward(const float* x, int64_t num_tokens, ThreadPool& pool, float* out) const;

 private:
  struct Expert {
    // Gate and up as one GEMM (gate_up: [2 expert_ffn, hidden], gate rows first) when stored in
    // one type, else apart ([expert_ffn, hidden] each).
    std::unique_ptr<kernels::LinearWeight> gate_up, gate, up;
    std::unique_ptr<kernels::LinearWeight> down;  // [hidden, expert_ffn]
  };
  // Per-expert biases, each [num_experts * width]; empty: none.
  struct ExpertBiases {
    std::vector<float> gate, up, down;
  };

  int64_t hidden_ = 0;
  int64_t expert_ffn_ = 0;
  int64_t num_experts_per_token_ = 0;
  bool normalize_top_k_ = true;
  ExpertActivation activation_ = ExpertActivation::kSilu;
  std::unique_ptr<kernels::LinearWeight> router_;  // [num_experts, hidden]
  std::vector<float> router_bias_;                 // [num_experts]; empty: none
  std::vector<Expert> experts_;                    // [num_experts]
  ExpertBiases biases_;
};

}  // namespace vllm
