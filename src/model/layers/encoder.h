// The BERT-style encoder (BERT, XLM-RoBERTa): embeddings
//   x = LayerNorm(word[token] + position[p + position_offset] + token_type[type])
// then per layer, post-norm,
//   x = LayerNorm(x + attn_output(bidirectional attention(q, k, v of x)))   attn_output_norm
//   x = LayerNorm(x + ffn_down(gelu_erf(ffn_up(x))))                        layer_output_norm
// with biases on every projection, and optionally a classification head over pooled vectors
//   scores = cls.output(tanh(cls(pooled)))
// (BERT's pooler + classifier, XLM-R's classifier dense + out_proj). llama.cpp's tensor names;
// no KV cache and no logits: the engine reads the last hidden states (ForwardHidden).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "kernels/ops.h"
#include "model/layers/encoder_ops.h"
#include "model/layers/qkv_projection.h"
#include "model/model.h"
#include "model/tensor_source.h"

namespace vllm {

class Encoder : public Model {
 public:
  Encoder(const ModelConfig& config, ThreadPool& pool) : config_(config), pool_(pool) {}

  // Also sets config().num_labels from the classification head's shape, when it has one.
  Status Load(const TensorSource& source, std::optional<GgmlType> linear_type);
  const ModelConfig& config() const override { return config_; }
  int64_t weight_bytes() const override { return weight_bytes_; }
  // An encoder has no logits: always an error.
  Status Forward(const ForwardBatch& batch, KvStorage& kv, float* logits) override;
  // Reads the batch's tokens, positions, query_start_loc and token_type_ids; `kv` is unused.
  Status ForwardHidden(const ForwardBatch& batch, KvStorage& kv, float* hidden) override;
  Status Classify(const float* pooled, int64_t num_rows, float* scores) const override;

 private:
  struct Norm {
    std::vector<float> weight, bias;  // [hidden] each
    LayerNormParams params(float eps) const { return {weight.data(), bias.data(), eps}; }
  };
  struct Projection {
    std::unique_ptr<kernels::LinearWeight> weight;  // [out, in]
    std::vector<float> bias;                        // [out]
  };
  struct Layer {
    QkvProjection qkv;
    Projection attn_output;  // [hidden, hidden]
    Norm attn_output_norm;
    Projection ffn_up;    // [ffn, hidden]
    Projection ffn_down;  // [hidden, ffn]
    Norm layer_output_norm;
  };
  Status CheckBatch(const ForwardBatch& batch) const;
  // y: [m, out] = x: [m, in] · Wᵀ + b
  void Project(const Projection& projection, const float* x, int64_t m, float* y) const;

  ModelConfig config_;
  ThreadPool& pool_;
  const GgufTensor* word_embeddings_ = nullptr;      // [vocab, hidden]
  const GgufTensor* position_embeddings_ = nullptr;  // [num_positions, hidden]
  const GgufTensor* type_embeddings_ = nullptr;      // [type_vocab_size, hidden]; null: none
  int64_t num_positions_ = 0;
  Norm embedding_norm_;
  std::vector<Layer> layers_;
  std::optional<Projection> classifier_dense_;  // cls: [hidden, hidden]
  std::optional<Projection> classifier_out_;    // cls.output: [num_labels, hidden]
  int64_t weight_bytes_ = 0;
};

// Builds and loads an Encoder (the factories of arch/ call it).
Expected<std::unique_ptr<Model>> CreateEncoder(const TensorSource& source,
                                               const ModelConfig& config,
                                               const ModelLoadOptions& options);

}  // namespace vllm
