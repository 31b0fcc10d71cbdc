// The Q, K and V projections of one attention layer (llama.cpp's attn_q / attn_k / attn_v, with
// attn_*.bias when present, or one stored attn_qkv whose rows are q, k, v): one fused GEMM when
// the three are stored (or converted) in one type, else three.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/thread_pool.h"
#include "kernels/ops.h"
#include "model/layers/lora_segments.h"
#include "model/weight_loader.h"

namespace vllm {

class QkvProjection {
 public:
  // prefix: "blk.<i>."; W_q: [q_size, hidden], W_k / W_v: [kv_size, hidden].
  Status Load(WeightLoader& loader, const std::string& prefix, int64_t hidden, int64_t q_size,
              int64_t kv_size);

  // x: [num_tokens, hidden] → q: [num_tokens, q_size], k / v: [num_tokens, kv_size], plus the
  // LoRA products of the q, k and v targets of `lora`'s adapters on their rows.
  void Forward(const float* x, int64_t num_tokens, ThreadPool& pool, float* q, float* k, float* v,
               const LayerLora& lora = {}) const;

 private:
  // The fused output (null: none) split into q, k and v, then the biases added.
  void SplitAndAddBias(const float* fused, int64_t num_tokens, ThreadPool& pool, float* q, float* k,
                       float* v) const;

  int64_t q_size_ = 0;
  int64_t kv_size_ = 0;
  std::unique_ptr<kernels::LinearWeight> wqkv_;  // [q_size + 2 kv_size, hidden], or null
  std::unique_ptr<kernels::LinearWeight> wq_, wk_, wv_;
  std::vector<float> bq_, bk_, bv_;  // [q_size], [kv_size], [kv_size]; empty: no bias
};

}  // namespace vllm
