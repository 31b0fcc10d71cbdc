// The dense gated feed-forward block: down(act(gate(x)) * up(x)), with act SiLU (SwiGLU) or
// tanh-approximated GELU (GeGLU). Gate and up run as one GEMM with the activation on each thread's
// share (kernels::GatedLinear) when stored in one type (or stored fused as ffn_up of 2 ffn rows,
// gate rows first, with no ffn_gate: Phi-3), else as two.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/thread_pool.h"
#include "kernels/ops.h"
#include "model/layers/lora_segments.h"
#include "model/weight_loader.h"

namespace vllm {

using kernels::GateActivation;

class GatedMlp {
 public:
  // prefix: "blk.<i>."; gate / up: [ffn, hidden], down: [hidden, ffn].
  Status Load(WeightLoader& loader, const std::string& prefix, int64_t hidden, int64_t ffn,
              GateActivation activation);

  // x: [num_tokens, hidden] → out: [num_tokens, hidden] (overwritten), with the gate, up and down
  // products of `lora`'s adapters on their rows (gate and up before the activation).
  void Forward(const float* x, int64_t num_tokens, ThreadPool& pool, float* out,
               const LayerLora& lora = {}) const;

 private:
  // Tokens per chunk of Forward: TinyLlama's gate_up output for 256 tokens is 11.5 MB (a
  // 2048-token step's, 92 MB).
  static constexpr int64_t kTokensPerChunk = 256;
  // Forward over one chunk of tokens, the batch rows [row_begin, row_begin + num_tokens):
  // x: [num_tokens, hidden] → out: [num_tokens, hidden].
  void ForwardChunk(const float* x, int64_t row_begin, int64_t num_tokens, ThreadPool& pool,
                    float* out, const LayerLora& lora) const;
  // gate: [num_tokens, ffn] = x · Gateᵀ and up likewise, unfused (so that LoRA adds to them
  // before the activation).
  void GateAndUp(const float* x, int64_t num_tokens, ThreadPool& pool, float* gate,
                 float* up) const;

  int64_t ffn_ = 0;
  GateActivation activation_ = GateActivation::kSilu;
  std::unique_ptr<kernels::LinearWeight> w_gate_up_;  // GatedPairLinear's [2 ffn, hidden], or null
  std::unique_ptr<kernels::LinearWeight> w_gate_, w_up_, w_down_;
};

}  // namespace vllm
