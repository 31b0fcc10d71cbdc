#include "model/layers/gated_mlp.h"

#include <memory>

#include "model/layers/tensor_ops.h"

namespace vllm {

Status GatedMlp::Load(WeightLoader& loader, const std::string& prefix, int64_t hidden, int64_t ffn,
                      GateActivation activation) {
  ffn_ = ffn;
  activation_ = activation;
  VLLM_RETURN_IF_ERROR(Assign(
      loader.GatedPairLinear(prefix + "ffn_gate.weight", prefix + "ffn_up.weight", ffn, hidden),
      &w_gate_up_));
  if (w_gate_up_ == nullptr) {  // gate and up in different types
    VLLM_RETURN_IF_ERROR(Assign(loader.Linear(prefix + "ffn_gate.weight", ffn, hidden), &w_gate_));
    VLLM_RETURN_IF_ERROR(Assign(loader.Linear(prefix + "ffn_up.weight", ffn, hidden), &w_up_));
  }
  return Assign(loader.Linear(prefix + "ffn_down.weight", hidden, ffn), &w_down_);
}

void GatedMlp::Forward(const float* x, int64_t num_tokens, ThreadPool& pool, float* out) const {
  // The tokens in chunks of at most kTokensPerChunk, as even as they divide, each through all
  // three projections before the next, so that a chunk's intermediates ([tokens, 2 ffn] gate and
  // up, [tokens, ffn] activations) are a fraction of a step's whole batch. A row's arithmetic is
  // the same in any chunk.
  const int64_t num_chunks = (num_tokens + kTokensPerChunk - 1) / kTokensPerChunk;
  const int64_t hidden = w_down_->rows();  // x's and out's row length
  for (int64_t chunk = 0; chunk < num_chunks; ++chunk) {
    const int64_t begin = num_tokens * chunk / num_chunks;
    const int64_t end = num_tokens * (chunk + 1) / num_chunks;
    ForwardChunk(x + begin * hidden, end - begin, pool, out + begin * hidden);
  }
}

void GatedMlp::ForwardChunk(const float* x, int64_t num_tokens, ThreadPool& pool,
                            float* out) const {
  // gate: [num_tokens, ffn], then act(gate) · up. Each buffer is written whole before it is read,
  // so left uninitialized.
  const auto gate = std::make_unique_for_overwrite<float[]>(num_tokens * ffn_);
  if (w_gate_up_ != nullptr) {
    kernels::GatedLinear(*w_gate_up_, x, num_tokens, activation_, gate.get(), pool);
  } else {
    const auto up = std::make_unique_for_overwrite<float[]>(num_tokens * ffn_);
    kernels::Linear(*w_gate_, x, num_tokens, gate.get(), pool);
    kernels::Linear(*w_up_, x, num_tokens, up.get(), pool);
    // Parallel over the tokens: a row's arithmetic is the same on every thread.
    pool.ParallelFor(num_tokens, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        float* row = gate.get() + t * ffn_;
        kernels::GateTimesUp(activation_, row, up.get() + t * ffn_, ffn_, row);
      }
    });
  }
  kernels::Linear(*w_down_, gate.get(), num_tokens, out, pool);
}

}  // namespace vllm
