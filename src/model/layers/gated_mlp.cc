#include "model/layers/gated_mlp.h"

#include <algorithm>
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

void GatedMlp::Forward(const float* x, int64_t num_tokens, ThreadPool& pool, float* out,
                       const LayerLora& lora) const {
  // The tokens in chunks of at most kTokensPerChunk, as even as they divide, each through all
  // three projections before the next, so that a chunk's intermediates ([tokens, 2 ffn] gate and
  // up, [tokens, ffn] activations) are a fraction of a step's whole batch. A row's arithmetic is
  // the same in any chunk.
  const int64_t num_chunks = (num_tokens + kTokensPerChunk - 1) / kTokensPerChunk;
  const int64_t hidden = w_down_->rows();  // x's and out's row length
  for (int64_t chunk = 0; chunk < num_chunks; ++chunk) {
    const int64_t begin = num_tokens * chunk / num_chunks;
    const int64_t end = num_tokens * (chunk + 1) / num_chunks;
    ForwardChunk(x + begin * hidden, begin, end - begin, pool, out + begin * hidden, lora);
  }
}

void GatedMlp::ForwardChunk(const float* x, int64_t row_begin, int64_t num_tokens, ThreadPool& pool,
                            float* out, const LayerLora& lora) const {
  using lora::LoraTarget;
  const int64_t hidden = w_down_->rows();
  const int64_t row_end = row_begin + num_tokens;
  // gate: [num_tokens, ffn], then act(gate) · up. Each buffer is written whole before it is read,
  // so left uninitialized.
  const auto gate = std::make_unique_for_overwrite<float[]>(num_tokens * ffn_);
  // GatedLinear is bit for bit the unfused path, so the base rows of a batch with a gate / up
  // adapter compute what they compute without one.
  if (w_gate_up_ != nullptr && !lora.Targets(LoraTarget::kGate) && !lora.Targets(LoraTarget::kUp)) {
    kernels::GatedLinear(*w_gate_up_, x, num_tokens, activation_, gate.get(), pool);
  } else {
    const auto up = std::make_unique_for_overwrite<float[]>(num_tokens * ffn_);
    GateAndUp(x, num_tokens, pool, gate.get(), up.get());
    lora.Apply({{LoraTarget::kGate, gate.get(), ffn_}, {LoraTarget::kUp, up.get(), ffn_}},
               row_begin, row_end, x, hidden, pool);
    // Parallel over the tokens: a row's arithmetic is the same on every thread.
    pool.ParallelFor(num_tokens, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        float* row = gate.get() + t * ffn_;
        kernels::GateTimesUp(activation_, row, up.get() + t * ffn_, ffn_, row);
      }
    });
  }
  kernels::Linear(*w_down_, gate.get(), num_tokens, out, pool);
  lora.Apply(LoraTarget::kDown, row_begin, row_end, gate.get(), ffn_, out, hidden, pool);
}

void GatedMlp::GateAndUp(const float* x, int64_t num_tokens, ThreadPool& pool, float* gate,
                         float* up) const {
  if (w_gate_up_ == nullptr) {
    kernels::Linear(*w_gate_, x, num_tokens, gate, pool);
    kernels::Linear(*w_up_, x, num_tokens, up, pool);
    return;
  }
  // The pair's output row takes turns as its weight's rows do (LinearWeight::CreateGatedPair):
  //   [ gate 0..T | up 0..T | gate T..2T | up T..2T | ... ],  T = kGatedRowsPerTurn or all ffn
  const int64_t rows_per_turn =
      ffn_ % kernels::kGatedRowsPerTurn == 0 ? kernels::kGatedRowsPerTurn : ffn_;
  const auto pair = std::make_unique_for_overwrite<float[]>(num_tokens * 2 * ffn_);
  kernels::Linear(*w_gate_up_, x, num_tokens, pair.get(), pool);
  pool.ParallelFor(num_tokens, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float* pair_row = pair.get() + t * 2 * ffn_;
      for (int64_t first = 0; first < ffn_; first += rows_per_turn) {
        std::copy_n(pair_row + 2 * first, rows_per_turn, gate + t * ffn_ + first);
        std::copy_n(pair_row + 2 * first + rows_per_turn, rows_per_turn, up + t * ffn_ + first);
      }
    }
  });
}

}  // namespace vllm
