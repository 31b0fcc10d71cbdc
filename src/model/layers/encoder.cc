#include "model/layers/encoder.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "model/layers/encoder_attention.h"
#include "model/layers/encoder_ops.h"
#include "model/layers/tensor_ops.h"
#include "model/load_progress.h"
#include "model/weight_loader.h"

namespace vllm {
namespace {

// Tokens one pass through the layers takes at most (whole sequences; a longer sequence goes
// alone): a pass's activations stay in the caches from one matrix to the next, which those of a
// whole 8192-token step do not (bench/HISTORY.md: bge-m3, 64 x 128 tokens, about 10 % faster).
// Rows are computed the same way in any pass, so the split never changes a result.
constexpr int64_t kTokensPerPass = 512;

// The layers run over passes of whole sequences, up to kTokensPerPass tokens each (a longer
// sequence alone): the first sequence of each pass, then the sequence count. [num_passes + 1]
std::vector<int64_t> PassStarts(std::span<const int32_t> query_start_loc) {
  const int64_t num_seqs = static_cast<int64_t>(query_start_loc.size()) - 1;
  std::vector<int64_t> pass_starts = {0};
  for (int64_t s = 1; s < num_seqs; ++s) {
    if (query_start_loc[s + 1] - query_start_loc[pass_starts.back()] > kTokensPerPass) {
      pass_starts.push_back(s);
    }
  }
  pass_starts.push_back(num_seqs);
  return pass_starts;
}

// The rows of an embedding table [num_rows, hidden] (any type) added into x: [n, hidden].
void AddEmbeddingRows(const GgufTensor& table, int64_t num_rows, int64_t hidden,
                      const std::vector<int32_t>& rows, int64_t row_offset, float* x) {
  const int64_t row_bytes = table.num_bytes / num_rows;
  std::vector<float> row(hidden);
  for (size_t t = 0; t < rows.size(); ++t) {
    kernels::DequantizeRow(table.type, table.data + (rows[t] + row_offset) * row_bytes, hidden,
                           row.data());
    for (int64_t i = 0; i < hidden; ++i) x[t * hidden + i] += row[i];
  }
}

}  // namespace

Status Encoder::Load(const TensorSource& source, std::optional<GgmlType> linear_type) {
  WeightLoader loader(source, linear_type);
  const int64_t hidden = config_.hidden_size;
  const int64_t ffn = config_.intermediate_size;
  auto load_norm = [&](const std::string& name, Norm* norm) -> Status {
    VLLM_RETURN_IF_ERROR(Assign(loader.Vector(name + ".weight", hidden), &norm->weight));
    return Assign(loader.Vector(name + ".bias", hidden), &norm->bias);
  };
  auto load_projection = [&](const std::string& name, int64_t rows, int64_t cols,
                             Projection* projection) -> Status {
    VLLM_RETURN_IF_ERROR(Assign(loader.Linear(name + ".weight", rows, cols), &projection->weight));
    if (!loader.Has(name + ".bias")) {
      projection->bias.assign(rows, 0.0f);
      return Status::Ok();
    }
    return Assign(loader.Vector(name + ".bias", rows), &projection->bias);
  };
  // An embedding table [?, hidden] whose row count the file decides.
  auto load_table = [&](const std::string& name, int64_t* num_rows) -> Expected<const GgufTensor*> {
    const GgufTensor* tensor = source.Find(name);
    if (tensor == nullptr) return Error{"model file is missing tensor '" + name + "'"};
    if (tensor->shape.size() != 2 || tensor->shape[0] != hidden || tensor->shape[1] <= 0) {
      return Error{"tensor '" + name + "' must be [rows, " + std::to_string(hidden) + "]"};
    }
    *num_rows = tensor->shape[1];
    return loader.Tensor(name, tensor->shape);
  };

  VLLM_RETURN_IF_ERROR(
      Assign(loader.Tensor("token_embd.weight", {hidden, config_.vocab_size}), &word_embeddings_));
  VLLM_RETURN_IF_ERROR(
      Assign(load_table("position_embd.weight", &num_positions_), &position_embeddings_));
  if (source.Find("token_types.weight") != nullptr) {
    int64_t num_types = 0;
    VLLM_RETURN_IF_ERROR(Assign(load_table("token_types.weight", &num_types), &type_embeddings_));
    config_.type_vocab_size = num_types;
  }
  VLLM_RETURN_IF_ERROR(load_norm("token_embd_norm", &embedding_norm_));
  layers_.resize(config_.num_layers);
  LoadProgress progress(config_.num_layers);
  for (int64_t l = 0; l < config_.num_layers; ++l) {
    const std::string prefix = "blk." + std::to_string(l) + ".";
    Layer& layer = layers_[l];
    VLLM_RETURN_IF_ERROR(layer.qkv.Load(loader, prefix, hidden,
                                        config_.num_heads * config_.head_dim,
                                        config_.num_kv_heads * config_.head_dim));
    VLLM_RETURN_IF_ERROR(load_projection(prefix + "attn_output", hidden,
                                         config_.num_heads * config_.head_dim, &layer.attn_output));
    VLLM_RETURN_IF_ERROR(load_norm(prefix + "attn_output_norm", &layer.attn_output_norm));
    VLLM_RETURN_IF_ERROR(load_projection(prefix + "ffn_up", ffn, hidden, &layer.ffn_up));
    VLLM_RETURN_IF_ERROR(load_projection(prefix + "ffn_down", hidden, ffn, &layer.ffn_down));
    VLLM_RETURN_IF_ERROR(load_norm(prefix + "layer_output_norm", &layer.layer_output_norm));
    progress.Step();
  }
  if (const GgufTensor* out = source.Find("cls.output.weight"); out != nullptr) {
    if (out->shape.size() != 2 || out->shape[1] <= 0) {
      return Error{"tensor 'cls.output.weight' must be [num_labels, hidden]"};
    }
    if (!config_.id2label.empty() &&
        static_cast<int64_t>(config_.id2label.size()) != out->shape[1]) {
      return Error{"the classifier has " + std::to_string(out->shape[1]) + " outputs but " +
                   std::to_string(config_.id2label.size()) + " labels"};
    }
    config_.num_labels = out->shape[1];
    classifier_dense_.emplace();
    classifier_out_.emplace();
    VLLM_RETURN_IF_ERROR(load_projection("cls", hidden, hidden, &*classifier_dense_));
    VLLM_RETURN_IF_ERROR(
        load_projection("cls.output", config_.num_labels, hidden, &*classifier_out_));
  } else {
    config_.num_labels = 0;
  }
  weight_bytes_ = loader.linear_bytes();
  return Status::Ok();
}

Status Encoder::Forward(const ForwardBatch&, KvStorage&, float*) {
  return Error{"encoder-only model " + config_.architecture + " does not generate"};
}

Status Encoder::CheckBatch(const ForwardBatch& batch) const {
  const int64_t num_tokens = batch.num_tokens();
  if (static_cast<int64_t>(batch.positions.size()) != num_tokens || batch.query_start_loc.empty() ||
      batch.query_start_loc.front() != 0 || batch.query_start_loc.back() != num_tokens ||
      (!batch.token_type_ids.empty() &&
       static_cast<int64_t>(batch.token_type_ids.size()) != num_tokens)) {
    return Error{"encoder batch: token, position and sequence counts disagree"};
  }
  for (size_t s = 0; s + 1 < batch.query_start_loc.size(); ++s) {
    if (batch.query_start_loc[s + 1] <= batch.query_start_loc[s]) {
      return Error{"encoder batch: every sequence needs at least one token"};
    }
  }
  for (int64_t t = 0; t < num_tokens; ++t) {
    if (batch.token_ids[t] < 0 || batch.token_ids[t] >= config_.vocab_size) {
      return Error{"token id " + std::to_string(batch.token_ids[t]) + " is out of range"};
    }
    if (batch.positions[t] < 0 || batch.positions[t] + config_.position_offset >= num_positions_) {
      return Error{"position " + std::to_string(batch.positions[t]) +
                   " is beyond the model's position embeddings"};
    }
    if (!batch.token_type_ids.empty() &&
        (batch.token_type_ids[t] < 0 ||
         batch.token_type_ids[t] >= std::max<int64_t>(config_.type_vocab_size, 1))) {
      return Error{"token type id " + std::to_string(batch.token_type_ids[t]) + " is out of range"};
    }
  }
  return Status::Ok();
}

void Encoder::Project(const Projection& projection, const float* x, int64_t m, float* y) const {
  kernels::Linear(*projection.weight, x, m, y, pool_);
  AddRowBias(projection.bias, m, y);
}

Status Encoder::ForwardHidden(const ForwardBatch& batch, KvStorage&, float* hidden_out) {
  VLLM_RETURN_IF_ERROR(CheckBatch(batch));
  const int64_t num_tokens = batch.num_tokens();
  const int64_t hidden = config_.hidden_size;
  const int64_t q_size = config_.num_heads * config_.head_dim;
  const int64_t kv_size = config_.num_kv_heads * config_.head_dim;
  const float eps = config_.layer_norm_eps;
  float* x = hidden_out;  // [num_tokens, hidden]: the residual stream, in place
  std::fill_n(x, num_tokens * hidden, 0.0f);
  AddEmbeddingRows(*word_embeddings_, config_.vocab_size, hidden, batch.token_ids, 0, x);
  AddEmbeddingRows(*position_embeddings_, num_positions_, hidden, batch.positions,
                   config_.position_offset, x);
  if (type_embeddings_ != nullptr) {
    const std::vector<int32_t> zeros(batch.token_type_ids.empty() ? num_tokens : 0, 0);
    AddEmbeddingRows(*type_embeddings_, config_.type_vocab_size, hidden,
                     batch.token_type_ids.empty() ? zeros : batch.token_type_ids, 0, x);
  }
  LayerNorm(x, embedding_norm_.params(eps), num_tokens, hidden, x);

  const std::vector<int64_t> pass_starts = PassStarts(batch.query_start_loc);
  int64_t pass_tokens = 0;  // the largest pass's token count
  for (size_t p = 0; p + 1 < pass_starts.size(); ++p) {
    pass_tokens = std::max<int64_t>(pass_tokens, batch.query_start_loc[pass_starts[p + 1]] -
                                                     batch.query_start_loc[pass_starts[p]]);
  }
  // q, attended: [pass_tokens, num_heads, head_dim]; k, v: [pass_tokens, num_kv_heads, head_dim]
  std::vector<float> q(pass_tokens * q_size), k(pass_tokens * kv_size), v(pass_tokens * kv_size);
  std::vector<float> attended(pass_tokens * q_size);
  std::vector<float> projected(pass_tokens * hidden);  // [pass_tokens, hidden]
  std::vector<float> intermediate(pass_tokens * config_.intermediate_size);  // [pass_tokens, ffn]
  const EncoderAttentionShape shape = {.num_heads = config_.num_heads,
                                       .num_kv_heads = config_.num_kv_heads,
                                       .head_dim = config_.head_dim,
                                       .scale = config_.AttentionScale()};
  for (size_t p = 0; p + 1 < pass_starts.size(); ++p) {
    const int32_t first_token = batch.query_start_loc[pass_starts[p]];
    const int64_t m = batch.query_start_loc[pass_starts[p + 1]] - first_token;
    std::vector<int32_t> starts;  // [pass sequences + 1]: query_start_loc within the pass
    for (int64_t s = pass_starts[p]; s <= pass_starts[p + 1]; ++s) {
      starts.push_back(batch.query_start_loc[s] - first_token);
    }
    float* xp = x + first_token * hidden;  // [m, hidden]: this pass's rows of x
    // xp = LayerNorm(xp + projection(input) + its bias), bias, residual and norm in one pass.
    auto project_add_and_norm = [&](const Projection& projection, const float* input,
                                    const Norm& norm) {
      kernels::Linear(*projection.weight, input, m, projected.data(), pool_);
      AddBiasResidualLayerNorm(projected.data(), projection.bias.data(), norm.params(eps), m,
                               hidden, pool_, xp);
    };
    for (const Layer& layer : layers_) {
      layer.qkv.Forward(xp, m, pool_, q.data(), k.data(), v.data());
      EncoderAttention(starts, q.data(), k.data(), v.data(), shape, pool_, attended.data());
      project_add_and_norm(layer.attn_output, attended.data(), layer.attn_output_norm);
      kernels::Linear(*layer.ffn_up.weight, xp, m, intermediate.data(), pool_);
      AddBiasGeluErf(layer.ffn_up.bias.data(), m, config_.intermediate_size, pool_,
                     intermediate.data());
      project_add_and_norm(layer.ffn_down, intermediate.data(), layer.layer_output_norm);
    }
  }
  return Status::Ok();
}

Status Encoder::Classify(const float* pooled, int64_t num_rows, float* scores) const {
  if (!classifier_out_) return Model::Classify(pooled, num_rows, scores);
  std::vector<float> dense(num_rows * config_.hidden_size);  // [num_rows, hidden]
  Project(*classifier_dense_, pooled, num_rows, dense.data());
  for (float& value : dense) value = std::tanh(value);
  Project(*classifier_out_, dense.data(), num_rows, scores);
  return Status::Ok();
}

Expected<std::unique_ptr<Model>> CreateEncoder(const TensorSource& source,
                                               const ModelConfig& config,
                                               const ModelLoadOptions& options) {
  auto model = std::make_unique<Encoder>(config, *options.pool);
  VLLM_RETURN_IF_ERROR(model->Load(source, options.linear_type));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace vllm
