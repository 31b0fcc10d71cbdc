// Phi-3 decoder with llama.cpp's GGUF tensor names: pre-norm RMSNorm blocks, one fused QKV
// projection (attn_qkv rows: q, k, v), NeoX rotary attention over paged KV with LongRoPE
// (per-frequency divisors rope_factors_short below the original context length,
// rope_factors_long from it on, cos and sin scaled by rope.scaling.attn_factor), and a SwiGLU FFN
// whose ffn_up holds the gate rows then the up rows.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "kernels/ops.h"
#include "model/layers/embedding_and_head.h"
#include "model/layers/paged_attention.h"
#include "model/layers/rope.h"
#include "model/layers/tensor_ops.h"
#include "model/load_progress.h"
#include "model/registry.h"
#include "model/weight_loader.h"

namespace vllm {
namespace {

using kernels::LinearWeight;

struct Phi3Layer {
  std::vector<float> attn_norm;             // [hidden]
  std::unique_ptr<LinearWeight> wqkv;       // [q_size + 2 kv_size, hidden]
  std::unique_ptr<LinearWeight> wo;         // [hidden, q_size]
  std::vector<float> ffn_norm;              // [hidden]
  std::unique_ptr<LinearWeight> w_gate_up;  // [2 ffn, hidden]: gate rows, then up rows
  std::unique_ptr<LinearWeight> w_down;     // [hidden, ffn]
};

class Phi3Model : public Model {
 public:
  Phi3Model(const ModelConfig& config, ThreadPool& pool) : config_(config), pool_(pool) {}

  Status Load(const TensorSource& source, std::optional<GgmlType> linear_type) {
    WeightLoader loader(source, linear_type);
    const int64_t hidden = config_.hidden_size;
    const int64_t q_size = config_.num_heads * config_.head_dim;
    const int64_t kv_size = config_.num_kv_heads * config_.head_dim;
    const int64_t ffn = config_.intermediate_size;
    auto embedding = loader.Tensor("token_embd.weight", {hidden, config_.vocab_size});
    if (!embedding) return Error{embedding.error()};
    embedding_ = *embedding;
    layers_.resize(config_.num_layers);
    LoadProgress progress(config_.num_layers);
    for (int64_t i = 0; i < config_.num_layers; ++i) {
      const std::string prefix = "blk." + std::to_string(i) + ".";
      Phi3Layer& layer = layers_[i];
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Vector(prefix + "attn_norm.weight", hidden), &layer.attn_norm));
      VLLM_RETURN_IF_ERROR(Assign(
          loader.Linear(prefix + "attn_qkv.weight", q_size + 2 * kv_size, hidden), &layer.wqkv));
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Linear(prefix + "attn_output.weight", hidden, q_size), &layer.wo));
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Vector(prefix + "ffn_norm.weight", hidden), &layer.ffn_norm));
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Linear(prefix + "ffn_up.weight", 2 * ffn, hidden), &layer.w_gate_up));
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Linear(prefix + "ffn_down.weight", hidden, ffn), &layer.w_down));
      progress.Step();
    }
    VLLM_RETURN_IF_ERROR(Assign(loader.Vector("output_norm.weight", hidden), &output_norm_));
    // Tied embeddings when the file has no separate output head.
    const char* head_name = loader.Has("output.weight") ? "output.weight" : "token_embd.weight";
    VLLM_RETURN_IF_ERROR(
        Assign(loader.Linear(head_name, config_.vocab_size, hidden), &output_head_));
    const int64_t num_freqs = config_.rope_dim / 2;
    std::vector<float> short_factors, long_factors;  // [rope_dim / 2] each; empty: none
    if (loader.Has("rope_factors_short.weight")) {
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Vector("rope_factors_short.weight", num_freqs), &short_factors));
    }
    if (loader.Has("rope_factors_long.weight")) {
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Vector("rope_factors_long.weight", num_freqs), &long_factors));
    }
    short_rope_ = std::make_unique<Rope>(config_, std::move(short_factors));
    long_rope_ = std::make_unique<Rope>(config_, std::move(long_factors));
    weight_bytes_ = loader.linear_bytes();
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
    const int64_t ffn = config_.intermediate_size;

    // Activations, each [num_tokens, width].
    std::vector<float> x(num_tokens * hidden), normed(num_tokens * hidden);
    std::vector<float> q(num_tokens * q_size), k(num_tokens * kv_size), v(num_tokens * kv_size);
    std::vector<float> attn(num_tokens * q_size), projected(num_tokens * hidden);
    std::vector<float> gate(num_tokens * ffn);
    std::vector<float> fused(num_tokens * std::max(q_size + 2 * kv_size, 2 * ffn));

    LookUpEmbeddings(*embedding_, config_.vocab_size, hidden, batch.token_ids, x.data());
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    for (int64_t l = 0; l < config_.num_layers; ++l) {
      const Phi3Layer& layer = layers_[l];
      kernels::RmsNorm(x.data(), layer.attn_norm.data(), num_tokens, hidden, config_.rms_norm_eps,
                       normed.data());
      // fused: [num_tokens, q_size + 2 kv_size] → q, k, v
      kernels::Linear(*layer.wqkv, normed.data(), num_tokens, fused.data(), pool_);
      SplitColumns(fused.data(), num_tokens,
                   {{q.data(), q_size}, {k.data(), kv_size}, {v.data(), kv_size}});
      ApplyRope(batch, num_heads, q.data());
      ApplyRope(batch, num_kv_heads, k.data());
      WriteKv(batch, l, k.data(), v.data(), kv);
      PagedAttention(batch, l, q.data(), num_heads, scale, kv, pool_, attn.data());
      kernels::Linear(*layer.wo, attn.data(), num_tokens, projected.data(), pool_);
      AddInPlace(projected, &x);

      kernels::RmsNorm(x.data(), layer.ffn_norm.data(), num_tokens, hidden, config_.rms_norm_eps,
                       normed.data());
      // fused: [num_tokens, 2 ffn], each row gate then up
      kernels::Linear(*layer.w_gate_up, normed.data(), num_tokens, fused.data(), pool_);
      for (int64_t t = 0; t < num_tokens; ++t) {
        const float* row = fused.data() + t * 2 * ffn;
        kernels::SiluMul(row, row + ffn, ffn, gate.data() + t * ffn);
      }
      kernels::Linear(*layer.w_down, gate.data(), num_tokens, projected.data(), pool_);
      AddInPlace(projected, &x);
    }

    SelectedRowsLogits(x.data(), hidden, batch.logits_indices, output_norm_, config_.rms_norm_eps,
                       *output_head_, pool_, logits);
    return Status::Ok();
  }

 private:
  // x: [num_tokens, num_heads, head_dim]; each token rotated with the short factors below the
  // original context length and the long ones from it on.
  void ApplyRope(const ForwardBatch& batch, int64_t num_heads, float* x) const {
    const int64_t head_dim = config_.head_dim;
    for (int64_t t = 0; t < batch.num_tokens(); ++t) {
      const bool beyond_original = config_.rope_original_context_length > 0 &&
                                   batch.positions[t] >= config_.rope_original_context_length;
      const Rope& rope = beyond_original ? *long_rope_ : *short_rope_;
      rope.Apply(&batch.positions[t], 1, num_heads, x + t * num_heads * head_dim);
    }
  }

  ModelConfig config_;
  ThreadPool& pool_;
  const GgufTensor* embedding_ = nullptr;  // [vocab_size, hidden], any supported type
  std::vector<Phi3Layer> layers_;
  std::vector<float> output_norm_;
  std::unique_ptr<LinearWeight> output_head_;
  std::unique_ptr<Rope> short_rope_, long_rope_;
  int64_t weight_bytes_ = 0;
};

}  // namespace

Expected<std::unique_ptr<Model>> CreatePhi3Model(const TensorSource& source,
                                                 const ModelConfig& config,
                                                 const ModelLoadOptions& options) {
  auto model = std::make_unique<Phi3Model>(config, *options.pool);
  VLLM_RETURN_IF_ERROR(model->Load(source, options.linear_type));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace vllm
