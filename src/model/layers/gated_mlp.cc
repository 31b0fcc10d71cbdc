#include "model/layers/gated_mlp.h"

#include <vector>

#include "model/layers/tensor_ops.h"

namespace vllm {

Status GatedMlp::Load(WeightLoader& loader, const std::string& prefix, int64_t hidden, int64_t ffn,
                      GateActivation activation) {
  ffn_ = ffn;
  activation_ = activation;
  if (!loader.Has(prefix + "ffn_gate.weight")) {  // stored fused
    VLLM_RETURN_IF_ERROR(
        Assign(loader.Linear(prefix + "ffn_up.weight", 2 * ffn, hidden), &w_gate_up_));
  } else {
    VLLM_RETURN_IF_ERROR(
        Assign(loader.FusedLinear(
                   {{prefix + "ffn_gate.weight", ffn}, {prefix + "ffn_up.weight", ffn}}, hidden),
               &w_gate_up_));
    if (w_gate_up_ == nullptr) {
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Linear(prefix + "ffn_gate.weight", ffn, hidden), &w_gate_));
      VLLM_RETURN_IF_ERROR(Assign(loader.Linear(prefix + "ffn_up.weight", ffn, hidden), &w_up_));
    }
  }
  return Assign(loader.Linear(prefix + "ffn_down.weight", hidden, ffn), &w_down_);
}

void GatedMlp::Forward(const float* x, int64_t num_tokens, ThreadPool& pool, float* out) const {
  auto gate_times_up = [&](const float* gate, const float* up, int64_t n, float* result) {
    if (activation_ == GateActivation::kSilu) {
      kernels::SiluMul(gate, up, n, result);
    } else {
      kernels::GeluTanhMul(gate, up, n, result);
    }
  };
  std::vector<float> gate(num_tokens * ffn_);  // [num_tokens, ffn]
  if (w_gate_up_ != nullptr) {
    // fused: [num_tokens, 2 ffn], each row gate then up
    std::vector<float> fused(num_tokens * 2 * ffn_);
    kernels::Linear(*w_gate_up_, x, num_tokens, fused.data(), pool);
    for (int64_t t = 0; t < num_tokens; ++t) {
      const float* row = fused.data() + t * 2 * ffn_;
      gate_times_up(row, row + ffn_, ffn_, gate.data() + t * ffn_);
    }
  } else {
    std::vector<float> up(num_tokens * ffn_);
    kernels::Linear(*w_gate_, x, num_tokens, gate.data(), pool);
    kernels::Linear(*w_up_, x, num_tokens, up.data(), pool);
    gate_times_up(gate.data(), up.data(), num_tokens * ffn_, gate.data());
  }
  kernels::Linear(*w_down_, gate.data(), num_tokens, out, pool);
}

}  // namespace vllm
