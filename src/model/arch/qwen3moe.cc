// Qwen3-MoE decoder with llama.cpp's GGUF tensor names: pre-norm RMSNorm blocks, rotary (NeoX)
// attention over paged KV with per-head Q/K RMSNorm before the rotation, and a sparse
// mixture-of-experts SwiGLU FFN in every layer (layers/moe.h), no shared expert.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "kernels/ops.h"
#include "model/layers/embedding_and_head.h"
#include "model/layers/moe.h"
#include "model/layers/paged_attention.h"
#include "model/layers/qkv_projection.h"
#include "model/layers/rope.h"
#include "model/layers/tensor_ops.h"
#include "model/load_progress.h"
#include "model/registry.h"
#include "model/weight_loader.h"

namespace vllm {
namespace {

using kernels::LinearWeight;

struct Qwen3MoeLayer {
  std::vector<float> attn_norm;  // [hidden]
  QkvProjection qkv;
  std::unique_ptr<LinearWeight> wo;
  std::vector<float> q_norm, k_norm;  // [head_dim]
  std::vector<float> ffn_norm;        // [hidden]
  MoeFeedForward moe;
};

class Qwen3MoeModel : public Model {
 public:
  Qwen3MoeModel(const ModelConfig& config, ThreadPool& pool) : config_(config), pool_(pool) {}

  Status Load(const TensorSource& source, std::optional<GgmlType> linear_type) {
    WeightLoader loader(source, linear_type);
    const int64_t hidden = config_.hidden_size;
    const int64_t q_size = config_.num_heads * config_.head_dim;
    const int64_t kv_size = config_.num_kv_heads * config_.head_dim;
    auto embedding = loader.Tensor("token_embd.weight", {hidden, config_.vocab_size});
    if (!embedding) return Error{embedding.error()};
    embedding_ = *embedding;
    layers_.resize(config_.num_layers);
    LoadProgress progress(config_.num_layers);
    int64_t moe_bytes = 0;  // routers and experts
    for (int64_t i = 0; i < config_.num_layers; ++i) {
      const std::string prefix = "blk." + std::to_string(i) + ".";
      Qwen3MoeLayer& layer = layers_[i];
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Vector(prefix + "attn_norm.weight", hidden), &layer.attn_norm));
      VLLM_RETURN_IF_ERROR(layer.qkv.Load(loader, prefix, hidden, q_size, kv_size));
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Linear(prefix + "attn_output.weight", hidden, q_size), &layer.wo));
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Vector(prefix + "attn_q_norm.weight", config_.head_dim), &layer.q_norm));
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Vector(prefix + "attn_k_norm.weight", config_.head_dim), &layer.k_norm));
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Vector(prefix + "ffn_norm.weight", hidden), &layer.ffn_norm));
      const int64_t bytes_before_moe = loader.linear_bytes();
      VLLM_RETURN_IF_ERROR(Assign(MoeFeedForward::Load(loader, prefix, config_), &layer.moe));
      moe_bytes += loader.linear_bytes() - bytes_before_moe;
      progress.Step();
    }
    VLLM_RETURN_IF_ERROR(Assign(loader.Vector("output_norm.weight", hidden), &output_norm_));
    // Tied embeddings when the file has no separate output head.
    const char* head_name = loader.Has("output.weight") ? "output.weight" : "token_embd.weight";
    VLLM_RETURN_IF_ERROR(
        Assign(loader.Linear(head_name, config_.vocab_size, hidden), &output_head_));
    rope_ = std::make_unique<Rope>(config_);
    // A token reads only its num_experts_per_token experts (the small routers are counted in the
    // same share).
    weight_bytes_ = loader.linear_bytes() - moe_bytes +
                    moe_bytes * config_.num_experts_per_token / config_.num_experts;
    return Status::Ok();
  }

  const ModelConfig& config() const override { return config_; }
  int64_t weight_bytes() const override { return weight_bytes_; }

  Status Forward(const ForwardBatch& batch, KvStorage& kv, float* logits) override {
    VLLM_RETURN_IF_ERROR(ValidateForwardBatch(batch, kv, config_));
    const int64_t num_tokens = batch.num_tokens();
    const int64_t hidden = config_.hidden_size;
    const int64_t num_heads = config_.num_heads;
    const int64_t num_kv_heads = config_.num_kv_heads;
    const int64_t head_dim = config_.head_dim;
    const int64_t q_size = num_heads * head_dim;
    const int64_t kv_size = num_kv_heads * head_dim;

    // Activations, each [num_tokens, width].
    std::vector<float> x(num_tokens * hidden), normed(num_tokens * hidden);
    std::vector<float> q(num_tokens * q_size), k(num_tokens * kv_size), v(num_tokens * kv_size);
    std::vector<float> attn(num_tokens * q_size), projected(num_tokens * hidden);

    LookUpEmbeddings(*embedding_, config_.vocab_size, hidden, batch.token_ids, x.data());
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    for (int64_t l = 0; l < config_.num_layers; ++l) {
      const Qwen3MoeLayer& layer = layers_[l];
      kernels::RmsNorm(x.data(), layer.attn_norm.data(), num_tokens, hidden, config_.rms_norm_eps,
                       normed.data());
      layer.qkv.Forward(normed.data(), num_tokens, pool_, q.data(), k.data(), v.data());
      // Each head's vector normalized on its own.
      kernels::RmsNorm(q.data(), layer.q_norm.data(), num_tokens * num_heads, head_dim,
                       config_.rms_norm_eps, q.data());
      kernels::RmsNorm(k.data(), layer.k_norm.data(), num_tokens * num_kv_heads, head_dim,
                       config_.rms_norm_eps, k.data());
      rope_->Apply(batch.positions.data(), num_tokens, num_heads, q.data());
      rope_->Apply(batch.positions.data(), num_tokens, num_kv_heads, k.data());
      WriteKv(batch, l, k.data(), v.data(), kv);
      PagedAttention(batch, l, q.data(), num_heads, scale, kv, pool_, attn.data());
      kernels::Linear(*layer.wo, attn.data(), num_tokens, projected.data(), pool_);
      AddInPlace(projected, &x);

      kernels::RmsNorm(x.data(), layer.ffn_norm.data(), num_tokens, hidden, config_.rms_norm_eps,
                       normed.data());
      layer.moe.Forward(normed.data(), num_tokens, pool_, projected.data());
      AddInPlace(projected, &x);
    }

    SelectedRowsLogits(x.data(), hidden, batch.logits_indices, output_norm_, config_.rms_norm_eps,
                       *output_head_, pool_, logits);
    return Status::Ok();
  }

 private:
  ModelConfig config_;
  ThreadPool& pool_;
  const GgufTensor* embedding_ = nullptr;  // [vocab_size, hidden], any supported type
  std::vector<Qwen3MoeLayer> layers_;
  std::vector<float> output_norm_;
  std::unique_ptr<LinearWeight> output_head_;
  std::unique_ptr<Rope> rope_;
  int64_t weight_bytes_ = 0;
};

}  // namespace

Expected<std::unique_ptr<Model>> CreateQwen3MoeModel(const TensorSource& source,
                                                     const ModelConfig& config,
                                                     const ModelLoadOptions& options) {
  if (config.num_experts <= 0) return Error{"qwen3moe model config has no experts"};
  auto model = std::make_unique<Qwen3MoeModel>(config, *options.pool);
  VLLM_RETURN_IF_ERROR(model->Load(source, options.linear_type));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace vllm
