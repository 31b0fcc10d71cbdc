// Sparse mixture-of-experts SwiGLU feed-forward block (Qwen3-MoE style): a router picks each
// token's top-k experts from a softmax over all of them, renormalizes the k weights to sum to 1 and
// sums the chosen experts' SwiGLU outputs with those weights. Tokens are grouped by expert so that
// each expert runs its gate, up and down GEMMs once over all the tokens routed to it.
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

class MoeFeedForward {
 public:
  // Reads `prefix` + ffn_gate_inp.weight (router: [num_experts, hidden]) and ffn_{gate,up}_exps
  // ([num_experts] × [expert_ffn, hidden]) and ffn_down_exps ([num_experts] × [hidden,
  // expert_ffn]).
  static Expected<MoeFeedForward> Load(WeightLoader& loader, const std::string& prefix,
                                       const ModelConfig& config);

  // x: [num_tokens, hidden] → out: [num_tokens, hidden] (overwritten).
  void Forward(const float* x, int64_t num_tokens, ThreadPool& pool, float* out) const;

 private:
  struct Expert {
    std::unique_ptr<kernels::LinearWeight> gate, up;  // [expert_ffn, hidden]
    std::unique_ptr<kernels::LinearWeight> down;      // [hidden, expert_ffn]
  };

  int64_t hidden_ = 0;
  int64_t expert_ffn_ = 0;
  int64_t num_experts_per_token_ = 0;
  std::unique_ptr<kernels::LinearWeight> router_;  // [num_experts, hidden]
  std::vector<Expert> experts_;                    // [num_experts]
};

}  // namespace vllm
