// A decoder as a pooling model: the decoder body's hidden states, plus the heads its files give.
// Embedders: sentence-transformers Dense modules over the pooled vector, dense_<k>.weight in
// module order, as llama.cpp names EmbeddingGemma's 2_Dense and 3_Dense (identity activation, no
// bias; the last one's width is hidden_size). Classifiers (rerankers): a head of num_labels rows
// over the pooled (last-token) vector. The rows come from the files:
//   - vLLM's classifier_from_token: the output head's rows of those tokens; with
//     is_original_qwen3_reranker one row, head[true] - head[false] (Qwen3-Reranker loaded as
//     Qwen3ForSequenceClassification from its causal-LM checkpoint), so that
//     sigmoid(row · h) = softmax(head[false] · h, head[true] · h)[1];
//   - cls.output.weight: a converted checkpoint's score.weight [num_labels, hidden], or
//     llama.cpp's rank head of a Qwen3-Reranker GGUF, two rows labelled "yes" and "no", which
//     becomes the one row yes - no in the same way.
#pragma once

#include <memory>
#include <vector>

#include "kernels/ops.h"
#include "model/model.h"
#include "model/tensor_source.h"

namespace vllm {

class PoolingDecoder : public Model {
 public:
  // `body` itself when the files give it no head. `pool` runs the Dense modules.
  static Expected<std::unique_ptr<Model>> Wrap(const TensorSource& source,
                                               std::unique_ptr<Model> body, ThreadPool& pool);

  const ModelConfig& config() const override { return config_; }
  Status Forward(const ForwardBatch& batch, KvStorage& kv, float* logits) override {
    return body_->Forward(batch, kv, logits);
  }
  Status ForwardHidden(const ForwardBatch& batch, KvStorage& kv, float* hidden) override {
    return body_->ForwardHidden(batch, kv, hidden);
  }
  Status ProjectPooled(float* pooled, int64_t num_rows) const override;
  Status Classify(const float* pooled, int64_t num_rows, float* scores) const override;
  int64_t weight_bytes() const override { return body_->weight_bytes(); }

 private:
  PoolingDecoder(std::unique_ptr<Model> body, ThreadPool& pool)
      : body_(std::move(body)), config_(body_->config()), pool_(pool) {}

  std::unique_ptr<Model> body_;
  ModelConfig config_;  // the body's, with num_labels
  ThreadPool& pool_;
  std::vector<float> rows_;  // [num_labels, hidden]; empty: no classifier
  std::vector<std::unique_ptr<kernels::LinearWeight>> dense_;  // in module order
};

}  // namespace vllm
