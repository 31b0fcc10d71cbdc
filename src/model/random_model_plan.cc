#include "model/random_model_plan.h"

#include <cmath>

#include "formats/gguf_writer.h"
#include "kernels/ops.h"

namespace vllm {
namespace {

// SplitMix64: a tiny, fast, well-mixed generator; values depend only on (seed, tensor, index).
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// FNV-1a: a stable hash of tensor names (std::hash may differ between standard libraries).
uint64_t NameHash(const std::string& name) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : name) hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

}  // namespace

std::string LayerPrefix(int64_t layer) { return "blk." + std::to_string(layer) + "."; }

RandomModelPlan::RandomModelPlan(const ModelShape& shape, GgmlType matrix_type)
    : shape_(shape), matrix_type_(matrix_type) {}

int64_t RandomModelPlan::head_dim() const { return shape_.resolved_head_dim(); }

void RandomModelPlan::AddKey(const std::string& suffix, GgufValue value) {
  keys_.emplace_back(shape_.architecture + "." + suffix, std::move(value));
}

void RandomModelPlan::AddMatrix(const std::string& name, std::vector<int64_t> shape,
                                std::optional<float> scale) {
  const float row_scale = scale.value_or(1.0f / std::sqrt(static_cast<float>(shape[0])));
  tensors_.push_back({name, std::move(shape), matrix_type_, row_scale});
}

void RandomModelPlan::AddResidualMatrix(const std::string& name, std::vector<int64_t> shape) {
  const float scale = residual_scale / std::sqrt(static_cast<float>(shape[0]));
  AddMatrix(name, std::move(shape), scale);
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
  AddResidualMatrix(p + "attn_output.weight", {q_size, hidden});
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
    AddResidualMatrix(p + "ffn_down_exps.weight", {ffn, hidden, experts});
    if (options.expert_biases) {
      AddF32(p + "ffn_gate_inp.bias", {experts}, kBiasScale);
      AddF32(p + "ffn_gate_exps.bias", {ffn, experts}, kBiasScale);
      AddF32(p + "ffn_up_exps.bias", {ffn, experts}, kBiasScale);
      AddF32(p + "ffn_down_exps.bias", {hidden, experts}, kBiasScale);
    }
  } else if (options.fused_gate_up) {
    AddMatrix(p + "ffn_up.weight", {hidden, 2 * ffn});
    AddResidualMatrix(p + "ffn_down.weight", {ffn, hidden});
  } else {
    AddMatrix(p + "ffn_gate.weight", {hidden, ffn});
    AddMatrix(p + "ffn_up.weight", {hidden, ffn});
    AddResidualMatrix(p + "ffn_down.weight", {ffn, hidden});
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

void RandomModelPlan::AddPooling() {
  if (shape_.pooling_type < 0) return;
  AddKey("pooling_type", GgufValue::Uint32(static_cast<uint32_t>(shape_.pooling_type)));
  if (shape_.pooling_type != 4) return;
  const int64_t hidden = shape_.hidden_size;
  AddF32("cls.output.weight", {hidden, 2}, 1.0f / std::sqrt(static_cast<float>(hidden)));
  AddKey("classifier.output_labels",
         GgufValue::Array(
             {GgufValueType::kString, {GgufValue::String("yes"), GgufValue::String("no")}}));
}

Status WriteRandomTensors(const std::vector<RandomTensor>& tensors, uint64_t seed,
                          const std::string& path, GgufWriter* writer) {
  for (const RandomTensor& tensor : tensors) {
    writer->AddTensor(tensor.name, tensor.shape, tensor.type);
  }
  VLLM_RETURN_IF_ERROR(writer->Begin(path));
  std::vector<float> row;
  std::vector<uint8_t> data;
  for (size_t index = 0; index < tensors.size(); ++index) {
    const RandomTensor& tensor = tensors[index];
    const int64_t cols = tensor.shape[0];
    int64_t rows = 1;  // every dimension after the first
    for (size_t d = 1; d < tensor.shape.size(); ++d) rows *= tensor.shape[d];
    const int64_t row_bytes = GgufWriter::TensorBytes({cols}, tensor.type);
    const uint64_t tensor_seed = Mix(seed ^ NameHash(tensor.name));
    row.resize(cols);
    data.resize(rows * row_bytes);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        if (!tensor.values.empty()) {
          row[c] = tensor.values[r * cols + c];
          continue;
        }
        if (tensor.scale == 0.0f) {
          row[c] = 1.0f;
          continue;
        }
        // 24 random bits → uniform in [-1, 1).
        uint64_t bits = Mix(tensor_seed + static_cast<uint64_t>(r * cols + c)) >> 40;
        const float uniform = static_cast<float>(bits) * (2.0f / 16777216.0f) - 1.0f;
        row[c] = tensor.scale > 0.0f ? uniform * tensor.scale : 1.0f + uniform * tensor.scale;
      }
      kernels::QuantizeRow(tensor.type, row.data(), cols, data.data() + r * row_bytes);
    }
    VLLM_RETURN_IF_ERROR(writer->WriteTensorData(index, data.data(), data.size()));
  }
  return writer->Finish();
}

}  // namespace vllm
