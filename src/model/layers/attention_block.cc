#include "model/layers/attention_block.h"

#include <memory>

#include "dist/communicator.h"
#include "model/layers/encoder_attention.h"
#include "model/layers/paged_attention.h"
#include "model/layers/tensor_ops.h"

namespace vllm {

Status AttentionBlock::Load(WeightLoader& loader, int64_t layer, const ModelConfig& config,
                            dist::Communicator* tensor_parallel) {
  const std::string prefix = "blk." + std::to_string(layer) + ".";
  layer_ = layer;
  tensor_parallel_ = tensor_parallel;
  num_heads_ = config.num_heads;
  num_kv_heads_ = config.num_kv_heads;
  head_dim_ = config.head_dim;
  eps_ = config.rms_norm_eps;
  scale_ = config.AttentionScale();
  logit_softcap_ = config.attn_logit_softcap;
  sliding_window_ = config.LayerSlidingWindow(layer);
  bidirectional_ = config.bidirectional_attention;
  const int64_t hidden = config.hidden_size;
  const int64_t q_size = num_heads_ * head_dim_;
  VLLM_RETURN_IF_ERROR(qkv_.Load(loader, prefix, hidden, q_size, num_kv_heads_ * head_dim_));
  if (loader.Has(prefix + "attn_q_norm.weight")) {
    VLLM_RETURN_IF_ERROR(Assign(loader.Vector(prefix + "attn_q_norm.weight", head_dim_), &q_norm_));
    VLLM_RETURN_IF_ERROR(Assign(loader.Vector(prefix + "attn_k_norm.weight", head_dim_), &k_norm_));
  }
  if (loader.Has(prefix + "attn_sinks.weight")) {
    VLLM_RETURN_IF_ERROR(Assign(loader.Vector(prefix + "attn_sinks.weight", num_heads_), &sinks_));
  }
  if (bidirectional_ && (logit_softcap_ > 0 || !sinks_.empty())) {
    return Error{"bidirectional attention with logit soft-capping or sinks is not supported"};
  }
  VLLM_RETURN_IF_ERROR(Assign(loader.Linear(prefix + "attn_output.weight", hidden, q_size), &wo_));
  if (loader.Has(prefix + "attn_output.bias")) {
    VLLM_RETURN_IF_ERROR(Assign(loader.Vector(prefix + "attn_output.bias", hidden), &wo_bias_));
  }
  return Status::Ok();
}

Status AttentionBlock::Forward(const float* x, const ForwardBatch& batch, const Rope& rope,
                               KvStorage& kv, ThreadPool& pool, float* out,
                               const LoraSegments* lora) const {
  const LayerLora layer_lora{lora, layer_};
  const int64_t num_tokens = batch.num_tokens();
  const int64_t q_size = num_heads_ * head_dim_;
  const int64_t kv_size = num_kv_heads_ * head_dim_;
  // q, attn: [num_tokens, num_heads, head_dim]; k, v: [num_tokens, num_kv_heads, head_dim]; each
  // written whole before it is read, so left uninitialized (no memset of megabytes per layer).
  const auto q = std::make_unique_for_overwrite<float[]>(num_tokens * q_size);
  const auto k = std::make_unique_for_overwrite<float[]>(num_tokens * kv_size);
  const auto v = std::make_unique_for_overwrite<float[]>(num_tokens * kv_size);
  const auto attn = std::make_unique_for_overwrite<float[]>(num_tokens * q_size);
  qkv_.Forward(x, num_tokens, pool, q.get(), k.get(), v.get(), layer_lora);
  // Token by token, in parallel: Q/K norms (each head's vector on its own), the rotation, and
  // (causal) K and V into the token's cache slot.
  pool.ParallelFor(num_tokens, [&](int64_t begin, int64_t end) {
    float* q_rows = q.get() + begin * q_size;
    float* k_rows = k.get() + begin * kv_size;
    const int64_t n = end - begin;
    if (!q_norm_.empty()) {
      kernels::RmsNorm(q_rows, q_norm_.data(), n * num_heads_, head_dim_, eps_, q_rows);
      kernels::RmsNorm(k_rows, k_norm_.data(), n * num_kv_heads_, head_dim_, eps_, k_rows);
    }
    rope.Apply(batch.positions.data() + begin, n, num_heads_, q_rows);
    rope.Apply(batch.positions.data() + begin, n, num_kv_heads_, k_rows);
    if (!bidirectional_) WriteKv(batch, layer_, begin, end, k.get(), v.get(), kv);
  });
  if (bidirectional_) {
    EncoderAttention(batch.query_start_loc, q.get(), k.get(), v.get(),
                     {.num_heads = num_heads_,
                      .num_kv_heads = num_kv_heads_,
                      .head_dim = head_dim_,
                      .scale = scale_,
                      .window = sliding_window_ / 2},
                     pool, attn.get());
  } else {
    PagedAttention(batch, layer_, q.get(), num_heads_,
                   {.scale = scale_,
                    .sliding_window = sliding_window_,
                    .logit_softcap = logit_softcap_,
                    .sinks = sinks_.empty() ? nullptr : sinks_.data()},
                   kv, pool, attn.get());
  }
  kernels::Linear(*wo_, attn.get(), num_tokens, out, pool);
  const int64_t hidden = wo_->rows();
  if (tensor_parallel_ != nullptr) {
    VLLM_RETURN_IF_ERROR(tensor_parallel_->AllReduceSum(out, num_tokens * hidden));
  }
  if (!wo_bias_.empty()) AddRowBias(wo_bias_, num_tokens, out);
  layer_lora.Apply(lora::LoraTarget::kO, 0, num_tokens, attn.get(), q_size, out, hidden, pool);
  return Status::Ok();
}

}  // namespace vllm
