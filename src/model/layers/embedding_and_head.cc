#include "model/layers/embedding_and_head.h"

#include <algorithm>
#include <cmath>

#include "model/layers/tensor_ops.h"

namespace vllm {

Status EmbeddingAndHead::Load(WeightLoader& loader, const ModelConfig& config,
                              float embedding_scale) {
  vocab_size_ = config.vocab_size;
  hidden_ = config.hidden_size;
  eps_ = config.rms_norm_eps;
  embedding_scale_ = embedding_scale;
  final_logit_softcap_ = config.final_logit_softcap;
  VLLM_RETURN_IF_ERROR(
      Assign(loader.Tensor("token_embd.weight", {hidden_, vocab_size_}), &embedding_));
  VLLM_RETURN_IF_ERROR(Assign(loader.Vector("output_norm.weight", hidden_), &norm_));
  // Tied embeddings when the file has no separate output head.
  const char* head_name = loader.Has("output.weight") ? "output.weight" : "token_embd.weight";
  return Assign(loader.Linear(head_name, vocab_size_, hidden_), &head_);
}

void EmbeddingAndHead::Embed(const std::vector<int32_t>& token_ids, float* x) const {
  const int64_t row_bytes = embedding_->num_bytes / vocab_size_;
  for (size_t t = 0; t < token_ids.size(); ++t) {
    float* row = x + t * hidden_;
    kernels::DequantizeRow(embedding_->type, embedding_->data + token_ids[t] * row_bytes, hidden_,
                           row);
    if (embedding_scale_ != 1.0f) {
      for (int64_t i = 0; i < hidden_; ++i) row[i] *= embedding_scale_;
    }
  }
}

void EmbeddingAndHead::ReplaceRows(std::span<const float> values, bool already_scaled,
                                   float* x) const {
  const float scale = already_scaled ? 1.0f : embedding_scale_;
  for (size_t i = 0; i < values.size(); ++i) x[i] = values[i] * scale;
}

void EmbeddingAndHead::FinalNorm(const float* x, int64_t num_rows, float* out) const {
  kernels::RmsNorm(x, norm_.data(), num_rows, hidden_, eps_, out);
}

void EmbeddingAndHead::Logits(const float* x, const std::vector<int32_t>& logits_indices,
                              ThreadPool& pool, float* logits) const {
  const int64_t num_logits = static_cast<int64_t>(logits_indices.size());
  // selected: [num_logits, hidden]
  std::vector<float> selected(num_logits * hidden_);
  for (int64_t r = 0; r < num_logits; ++r) {
    const float* row = x + int64_t{logits_indices[r]} * hidden_;
    std::copy(row, row + hidden_, selected.data() + r * hidden_);
  }
  kernels::RmsNorm(selected.data(), norm_.data(), num_logits, hidden_, eps_, selected.data());
  kernels::Linear(*head_, selected.data(), num_logits, logits, pool);
  if (final_logit_softcap_ > 0) {
    const float cap = final_logit_softcap_;
    for (int64_t i = 0; i < num_logits * vocab_size_; ++i) {
      logits[i] = cap * std::tanh(logits[i] / cap);
    }
  }
}

}  // namespace vllm
