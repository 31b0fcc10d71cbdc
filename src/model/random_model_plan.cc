#include "model/random_model_plan.h"

#include <cmath>

namespace vllm {

std::string LayerPrefix(int64_t layer) { return "blk." + std::to_string(layer) + "."; }

RandomModelPlan::RandomModelPlan(const ModelShape& shape, GgmlType matrix_type)
    : shape_(shape), matrix_type_(matrix_type) {}

int64_t RandomModelPlan::head_dim() const {
  return shape_.head_dim > 0 ? shape_.head_dim : shape_.hidden_size / shape_.num_heads;
}

void RandomModelPlan::AddKey(const std::string& suffix, GgufValue value) {
  keys_.emplace_back(shape_.architecture + "." + suffix, std::move(value));
}

void RandomModelPlan::AddMatrix(const std::string& name, std::vector<int64_t> shape,
                                std::optional<float> scale) {
  const float row_scale = scale.value_or(1.0f / std::sqrt(static_cast<float>(shape[0])));
  tensors_.push_back({name, std::move(shape), matrix_type_, row_scale});
}

void RandomModelPlan::AddF32(const std::string& name, std::vector<int64_t> shape, float scale) {
  tensors_.push_back({name, std::move(shape), GgmlType::kF32, scale});
}

void RandomModelPlan::AddValues(const std::string& name, std::vector<float> values) {
  const auto length = static_cast<int64_t>(values.size());
  tensors_.push_back({name, {length}, GgmlType::kF32, 0.0f, std::move(values)});
}

void RandomModelPlan::AddNorm(const std::string& name, int64_t length) {
  AddF32(name, {length}, norm_scale);
}

void RandomModelPlan::AddAttention(int64_t layer, const AttentionPlanOptions& options) {
  const std::string p = LayerPrefix(layer);
  const int64_t hidden = shape_.hidden_size;
  const int64_t q_size = shape_.num_heads * head_dim();
  const int64_t kv_size = shape_.num_kv_heads * head_dim();
  constexpr float kBiasScale = 0.1f;
  AddNorm(p + "attn_norm.weight", hidden);
  if (options.fused_qkv) {
    AddMatrix(p + "attn_qkv.weight", {hidden, q_size + 2 * kv_size});
  } else {
    AddMatrix(p + "attn_q.weight", {hidden, q_size});
    AddMatrix(p + "attn_k.weight", {hidden, kv_size});
    AddMatrix(p + "attn_v.weight", {hidden, kv_size});
  }
  if (options.qkv_bias) {
    AddF32(p + "attn_q.bias", {q_size}, kBiasScale);
    AddF32(p + "attn_k.bias", {kv_size}, kBiasScale);
    AddF32(p + "attn_v.bias", {kv_size}, kBiasScale);
  }
  if (options.qk_norm) {  // around one whatever the family's norms
    AddF32(p + "attn_q_norm.weight", {head_dim()}, -0.5f);
    AddF32(p + "attn_k_norm.weight", {head_dim()}, -0.5f);
  }
  AddMatrix(p + "attn_output.weight", {q_size, hidden});
  if (options.output_bias) AddF32(p + "attn_output.bias", {hidden}, kBiasScale);
  if (options.attention_sinks) AddF32(p + "attn_sinks.weight", {shape_.num_heads}, 1.0f);
  if (options.post_norm) AddNorm(p + "post_attention_norm.weight", hidden);
}

void RandomModelPlan::AddFeedForward(int64_t layer, const FeedForwardPlanOptions& options) {
  const std::string p = LayerPrefix(layer);
  const int64_t hidden = shape_.hidden_size;
  const int64_t ffn = shape_.intermediate_size;
  constexpr float kBiasScale = 0.1f;
  AddNorm(p + options.norm_name + ".weight", hidden);
  if (shape_.num_experts > 0) {
    const int64_t experts = shape_.num_experts;
    // The router stays f32, as llama.cpp's quantizer leaves it.
    AddF32(p + "ffn_gate_inp.weight", {hidden, experts},
           1.0f / std::sqrt(static_cast<float>(hidden)));
    AddMatrix(p + "ffn_gate_exps.weight", {hidden, ffn, experts});
    AddMatrix(p + "ffn_up_exps.weight", {hidden, ffn, experts});
    AddMatrix(p + "ffn_down_exps.weight", {ffn, hidden, experts});
    if (options.expert_biases) {
      AddF32(p + "ffn_gate_inp.bias", {experts}, kBiasScale);
      AddF32(p + "ffn_gate_exps.bias", {ffn, experts}, kBiasScale);
      AddF32(p + "ffn_up_exps.bias", {ffn, experts}, kBiasScale);
      AddF32(p + "ffn_down_exps.bias", {hidden, experts}, kBiasScale);
    }
  } else if (options.fused_gate_up) {
    AddMatrix(p + "ffn_up.weight", {hidden, 2 * ffn});
    AddMatrix(p + "ffn_down.weight", {ffn, hidden});
  } else {
    AddMatrix(p + "ffn_gate.weight", {hidden, ffn});
    AddMatrix(p + "ffn_up.weight", {hidden, ffn});
    AddMatrix(p + "ffn_down.weight", {ffn, hidden});
  }
  if (options.post_norm) AddNorm(p + "post_ffw_norm.weight", hidden);
}

void RandomModelPlan::AddLayers(const AttentionPlanOptions& attention,
                                const FeedForwardPlanOptions& ffn) {
  for (int64_t layer = 0; layer < shape_.num_layers; ++layer) {
    AddAttention(layer, attention);
    AddFeedForward(layer, ffn);
  }
}

}  // namespace vllm
