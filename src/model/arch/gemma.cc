// Gemma 3 text decoder with llama.cpp's GGUF tensor names: the token embedding scaled by
// sqrt(hidden) after lookup, pre- and post-norm RMSNorm around attention and FFN (the GGUF norm
// weights already include Gemma's +1), per-head Q/K RMSNorm before NeoX RoPE, GELU(tanh)-gated FFN,
// tied or separate output head. Layers alternate between local attention (a sliding window, RoPE
// base freq_base_swa, no position scaling) and global attention (full causal, RoPE base freq_base
// with the file's scaling): every sliding_window_pattern-th layer is global.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "kernels/ops.h"
#include "model/layers/embedding_and_head.h"
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

struct Gemma3Layer {
  std::vector<float> attn_norm;  // [hidden]
  QkvProjection qkv;
  std::unique_ptr<LinearWeight> wo;
  std::vector<float> q_norm, k_norm;       // [head_dim]
  std::vector<float> post_attention_norm;  // [hidden], on wo's output before the residual add
  std::vector<float> ffn_norm;             // [hidden]
  // Gate and up as one GEMM (w_gate_up: [2 ffn, hidden]) when stored in one type, else apart.
  std::unique_ptr<LinearWeight> w_gate_up, w_gate, w_up, w_down;
  std::vector<float> post_ffw_norm;  // [hidden], on w_down's output before the residual add
};

// A copy of `config` with the local layers' RoPE: base rope_theta_swa, positions unscaled.
ModelConfig LocalRopeConfig(const ModelConfig& config) {
  ModelConfig local = config;
  local.rope_theta = config.rope_theta_swa;
  local.rope_position_scale = 1.0f;
  return local;
}

class Gemma3Model : public Model {
 public:
  Gemma3Model(const ModelConfig& config, ThreadPool& pool)
      : config_(config), pool_(pool), global_rope_(config), local_rope_(LocalRopeConfig(config)) {}

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
      Gemma3Layer& layer = layers_[i];
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Vector(prefix + "attn_norm.weight", hidden), &layer.attn_norm));
      VLLM_RETURN_IF_ERROR(layer.qkv.Load(loader, prefix, hidden, q_size, kv_size));
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Linear(prefix + "attn_output.weight", hidden, q_size), &layer.wo));
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Vector(prefix + "attn_q_norm.weight", config_.head_dim), &layer.q_norm));
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Vector(prefix + "attn_k_norm.weight", config_.head_dim), &layer.k_norm));
      VLLM_RETURN_IF_ERROR(Assign(loader.Vector(prefix + "post_attention_norm.weight", hidden),
                                  &layer.post_attention_norm));
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Vector(prefix + "ffn_norm.weight", hidden), &layer.ffn_norm));
      VLLM_RETURN_IF_ERROR(
          Assign(loader.FusedLinear(
                     {{prefix + "ffn_gate.weight", ffn}, {prefix + "ffn_up.weight", ffn}}, hidden),
                 &layer.w_gate_up));
      if (layer.w_gate_up == nullptr) {
        VLLM_RETURN_IF_ERROR(
            Assign(loader.Linear(prefix + "ffn_gate.weight", ffn, hidden), &layer.w_gate));
        VLLM_RETURN_IF_ERROR(
            Assign(loader.Linear(prefix + "ffn_up.weight", ffn, hidden), &layer.w_up));
      }
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Linear(prefix + "ffn_down.weight", hidden, ffn), &layer.w_down));
      VLLM_RETURN_IF_ERROR(
          Assign(loader.Vector(prefix + "post_ffw_norm.weight", hidden), &layer.post_ffw_norm));
      progress.Step();
    }
    VLLM_RETURN_IF_ERROR(Assign(loader.Vector("output_norm.weight", hidden), &output_norm_));
    // Tied embeddings when the file has no separate output head.
    const char* head_name = loader.Has("output.weight") ? "output.weight" : "token_embd.weight";
    VLLM_RETURN_IF_ERROR(
        Assign(loader.Linear(head_name, config_.vocab_size, hidden), &output_head_));
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
    const float eps = config_.rms_norm_eps;

    // Activations, each [num_tokens, width].
    std::vector<float> x(num_tokens * hidden), normed(num_tokens * hidden);
    std::vector<float> q(num_tokens * q_size), k(num_tokens * kv_size), v(num_tokens * kv_size);
    std::vector<float> attn(num_tokens * q_size), projected(num_tokens * hidden);
    std::vector<float> gate(num_tokens * ffn), up(num_tokens * ffn);
    std::vector<float> fused(num_tokens * 2 * ffn);  // gate and up side by side

    LookUpEmbeddings(*embedding_, config_.vocab_size, hidden, batch.token_ids, x.data());
    const float embedding_scale = std::sqrt(static_cast<float>(hidden));
    for (float& value : x) value *= embedding_scale;
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    for (int64_t l = 0; l < config_.num_layers; ++l) {
      const Gemma3Layer& layer = layers_[l];
      const bool is_local = IsLocalLayer(l);
      const Rope& rope = is_local ? local_rope_ : global_rope_;

      kernels::RmsNorm(x.data(), layer.attn_norm.data(), num_tokens, hidden, eps, normed.data());
      layer.qkv.Forward(normed.data(), num_tokens, pool_, q.data(), k.data(), v.data());
      // Each head's vector normalized on its own.
      kernels::RmsNorm(q.data(), layer.q_norm.data(), num_tokens * num_heads, head_dim, eps,
                       q.data());
      kernels::RmsNorm(k.data(), layer.k_norm.data(), num_tokens * num_kv_heads, head_dim, eps,
                       k.data());
      rope.Apply(batch.positions.data(), num_tokens, num_heads, q.data());
      rope.Apply(batch.positions.data(), num_tokens, num_kv_heads, k.data());
      WriteKv(batch, l, k.data(), v.data(), kv);
      PagedAttention(batch, l, q.data(), num_heads, scale, kv, pool_, attn.data(),
                     is_local ? config_.sliding_window : 0);
      kernels::Linear(*layer.wo, attn.data(), num_tokens, projected.data(), pool_);
      kernels::RmsNorm(projected.data(), layer.post_attention_norm.data(), num_tokens, hidden, eps,
                       projected.data());
      AddInPlace(projected, &x);

      kernels::RmsNorm(x.data(), layer.ffn_norm.data(), num_tokens, hidden, eps, normed.data());
      if (layer.w_gate_up != nullptr) {
        // fused: [num_tokens, 2 ffn], each row gate then up
        kernels::Linear(*layer.w_gate_up, normed.data(), num_tokens, fused.data(), pool_);
        for (int64_t t = 0; t < num_tokens; ++t) {
          const float* row = fused.data() + t * 2 * ffn;
          kernels::GeluTanhMul(row, row + ffn, ffn, gate.data() + t * ffn);
        }
      } else {
        kernels::Linear(*layer.w_gate, normed.data(), num_tokens, gate.data(), pool_);
        kernels::Linear(*layer.w_up, normed.data(), num_tokens, up.data(), pool_);
        kernels::GeluTanhMul(gate.data(), up.data(), num_tokens * ffn, gate.data());
      }
      kernels::Linear(*layer.w_down, gate.data(), num_tokens, projected.data(), pool_);
      kernels::RmsNorm(projected.data(), layer.post_ffw_norm.data(), num_tokens, hidden, eps,
                       projected.data());
      AddInPlace(projected, &x);
    }

    SelectedRowsLogits(x.data(), hidden, batch.logits_indices, output_norm_, eps, *output_head_,
                       pool_, logits);
    return Status::Ok();
  }

 private:
  // Local (sliding-window) layers are all but every sliding_window_pattern-th one; with no
  // window every layer is global.
  bool IsLocalLayer(int64_t layer) const {
    return config_.sliding_window > 0 &&
           layer % config_.sliding_window_pattern < config_.sliding_window_pattern - 1;
  }

  ModelConfig config_;
  ThreadPool& pool_;
  Rope global_rope_;
  Rope local_rope_;
  const GgufTensor* embedding_ = nullptr;  // [vocab_size, hidden], any supported type
  std::vector<Gemma3Layer> layers_;
  std::vector<float> output_norm_;
  std::unique_ptr<LinearWeight> output_head_;
  int64_t weight_bytes_ = 0;
};

}  // namespace

Expected<std::unique_ptr<Model>> CreateGemma3Model(const TensorSource& source,
                                                   const ModelConfig& config,
                                                   const ModelLoadOptions& options) {
  auto model = std::make_unique<Gemma3Model>(config, *options.pool);
  VLLM_RETURN_IF_ERROR(model->Load(source, options.linear_type));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace vllm
