#include "model/layers/qkv_projection.h"

#include <memory>

#include "model/layers/tensor_ops.h"

namespace vllm {

Status QkvProjection::Load(WeightLoader& loader, const std::string& prefix, int64_t hidden,
                           int64_t q_size, int64_t kv_size) {
  q_size_ = q_size;
  kv_size_ = kv_size;
  if (loader.Has(prefix + "attn_qkv.weight")) {  // stored fused (Phi-3)
    VLLM_RETURN_IF_ERROR(
        Assign(loader.Linear(prefix + "attn_qkv.weight", q_size + 2 * kv_size, hidden), &wqkv_));
    return Status::Ok();
  }
  VLLM_RETURN_IF_ERROR(Assign(loader.FusedLinear({{prefix + "attn_q.weight", q_size},
                                                  {prefix + "attn_k.weight", kv_size},
                                                  {prefix + "attn_v.weight", kv_size}},
                                                 hidden),
                              &wqkv_));
  if (wqkv_ == nullptr) {
    VLLM_RETURN_IF_ERROR(Assign(loader.Linear(prefix + "attn_q.weight", q_size, hidden), &wq_));
    VLLM_RETURN_IF_ERROR(Assign(loader.Linear(prefix + "attn_k.weight", kv_size, hidden), &wk_));
    VLLM_RETURN_IF_ERROR(Assign(loader.Linear(prefix + "attn_v.weight", kv_size, hidden), &wv_));
  }
  if (loader.Has(prefix + "attn_q.bias")) {
    VLLM_RETURN_IF_ERROR(Assign(loader.Vector(prefix + "attn_q.bias", q_size), &bq_));
    VLLM_RETURN_IF_ERROR(Assign(loader.Vector(prefix + "attn_k.bias", kv_size), &bk_));
    VLLM_RETURN_IF_ERROR(Assign(loader.Vector(prefix + "attn_v.bias", kv_size), &bv_));
  }
  return Status::Ok();
}

void QkvProjection::Forward(const float* x, int64_t num_tokens, ThreadPool& pool, float* q,
                            float* k, float* v, const LayerLora& lora) const {
  // fused: [num_tokens, q_size + 2 kv_size], split into q, k, v below
  std::unique_ptr<float[]> fused;
  const int64_t width = q_size_ + 2 * kv_size_;
  if (wqkv_ != nullptr) {
    fused = std::make_unique_for_overwrite<float[]>(num_tokens * width);
    kernels::Linear(*wqkv_, x, num_tokens, fused.get(), pool);
  } else {
    kernels::Linear(*wq_, x, num_tokens, q, pool);
    kernels::Linear(*wk_, x, num_tokens, k, pool);
    kernels::Linear(*wv_, x, num_tokens, v, pool);
  }
  if (fused != nullptr || !bq_.empty()) {
    SplitAndAddBias(fused.get(), num_tokens, pool, q, k, v);
  }
  const int64_t hidden = wqkv_ != nullptr ? wqkv_->cols() : wq_->cols();
  lora.Apply({{lora::LoraTarget::kQ, q, q_size_},
              {lora::LoraTarget::kK, k, kv_size_},
              {lora::LoraTarget::kV, v, kv_size_}},
             0, num_tokens, x, hidden, pool);
}

void QkvProjection::SplitAndAddBias(const float* fused, int64_t num_tokens, ThreadPool& pool,
                                    float* q, float* k, float* v) const {
  const int64_t width = q_size_ + 2 * kv_size_;
  pool.ParallelFor(num_tokens, [&](int64_t begin, int64_t end) {
    float* q_rows = q + begin * q_size_;
    float* k_rows = k + begin * kv_size_;
    float* v_rows = v + begin * kv_size_;
    if (fused != nullptr) {
      SplitColumns(fused + begin * width, end - begin,
                   {{q_rows, q_size_}, {k_rows, kv_size_}, {v_rows, kv_size_}});
    }
    if (!bq_.empty()) {
      AddRowBias(bq_, end - begin, q_rows);
      AddRowBias(bk_, end - begin, k_rows);
      AddRowBias(bv_, end - begin, v_rows);
    }
  });
}

}  // namespace vllm
