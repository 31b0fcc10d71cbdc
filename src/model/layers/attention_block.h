// One attention sub-layer of a decoder, from its normed input to its output projection:
// Q/K/V projection (QkvProjection), per-head Q/K RMSNorm when the layer has attn_{q,k}_norm,
// rotary embedding (the caller's Rope), K/V written into the paged cache, paged attention (the
// layer's sliding window, the config's soft-cap, per-head sinks when the layer has attn_sinks) and
// the output projection attn_output (with attn_output.bias when present). Bidirectional decoders
// (config.bidirectional_attention) attend over each whole prompt of the batch instead, with no KV
// cache (EncoderAttention; a sliding-window layer's window is symmetric, sliding_window / 2 on
// either side). A tensor-parallel rank's block holds its heads (tensor_parallel.h): the output
// projection's partial sums are all-reduced over the group, then the bias is added.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/thread_pool.h"
#include "kernels/ops.h"
#include "model/forward_batch.h"
#include "model/kv_storage.h"
#include "model/layers/lora_segments.h"
#include "model/layers/qkv_projection.h"
#include "model/layers/rope.h"
#include "model/model_config.h"
#include "model/weight_loader.h"

namespace vllm {

namespace dist {
class Communicator;
}  // namespace dist

class AttentionBlock {
 public:
  // `config`: the rank-local one under `tensor_parallel` (its heads).
  Status Load(WeightLoader& loader, int64_t layer, const ModelConfig& config,
              dist::Communicator* tensor_parallel = nullptr);

  // x: [num_tokens, hidden] (normed) → out: [num_tokens, hidden], with the q, k, v and o
  // products of the batch's LoRA adapters (null: none). Errors only from the collective.
  Status Forward(const float* x, const ForwardBatch& batch, const Rope& rope, KvStorage& kv,
                 ThreadPool& pool, float* out, const LoraSegments* lora = nullptr) const;

 private:
  int64_t layer_ = 0;
  int64_t num_heads_ = 0, num_kv_heads_ = 0, head_dim_ = 0;
  float eps_ = 0.0f;
  float scale_ = 0.0f, logit_softcap_ = 0.0f;
  int64_t sliding_window_ = 0;
  bool bidirectional_ = false;
  dist::Communicator* tensor_parallel_ = nullptr;
  QkvProjection qkv_;
  std::vector<float> q_norm_, k_norm_;         // [head_dim]; empty: no Q/K norm
  std::vector<float> sinks_;                   // [num_heads]; empty: no sinks
  std::unique_ptr<kernels::LinearWeight> wo_;  // [hidden, num_heads * head_dim]
  std::vector<float> wo_bias_;                 // [hidden]; empty: none
};

}  // namespace vllm
