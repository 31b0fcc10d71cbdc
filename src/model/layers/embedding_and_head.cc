#include "model/layers/embedding_and_head.h"

#include <algorithm>
#include <cmath>

#include "dist/communicator.h"
#include "model/layers/tensor_ops.h"

namespace vllm {

Status EmbeddingAndHead::Load(WeightLoader& loader, const ModelConfig& config,
                              float embedding_scale, dist::Communicator* tensor_parallel,
                              bool with_head) {
  vocab_size_ = config.vocab_size;
  tensor_parallel_ = tensor_parallel;
  vocab_ = tensor_parallel == nullptr
               ? VocabShard{0, vocab_size_, vocab_size_}
               : VocabShardOf(vocab_size_, tensor_parallel->rank(), tensor_parallel->size());
  hidden_ = config.hidden_size;
  eps_ = config.rms_norm_eps;
  embedding_scale_ = embedding_scale;
  final_logit_softcap_ = config.final_logit_softcap;
  VLLM_RETURN_IF_ERROR(
      Assign(loader.Tensor("token_embd.weight", {hidden_, vocab_.num_rows}), &embedding_));
  if (!with_head) return Status::Ok();
  VLLM_RETURN_IF_ERROR(Assign(loader.Vector("output_norm.weight", hidden_), &norm_));
  // Tied embeddings when the file has no separate output head.
  const char* head_name = loader.Has("output.weight") ? "output.weight" : "token_embd.weight";
  return Assign(loader.Linear(head_name, vocab_.num_rows, hidden_), &head_);
}

Status EmbeddingAndHead::Embed(const std::vector<int32_t>& token_ids, float* x) const {
  const int64_t row_bytes = embedding_->num_bytes / vocab_.num_rows;
  for (size_t t = 0; t < token_ids.size(); ++t) {
    float* row = x + t * hidden_;
    const int64_t local_id = token_ids[t] - vocab_.begin;
    if (local_id < 0 || local_id >= vocab_.num_rows) {  // another rank's row
      std::fill(row, row + hidden_, 0.0f);
      continue;
    }
    kernels::DequantizeRow(embedding_->type, embedding_->data + local_id * row_bytes, hidden_, row);
    if (embedding_scale_ != 1.0f) {
      for (int64_t i = 0; i < hidden_; ++i) row[i] *= embedding_scale_;
    }
  }
  if (tensor_parallel_ == nullptr) return Status::Ok();
  // One rank holds each row, the others add zeros: the sum is that row's bits.
  return tensor_parallel_->AllReduceSum(x, static_cast<int64_t>(token_ids.size()) * hidden_);
}

void EmbeddingAndHead::ReplaceRows(std::span<const float> values, bool already_scaled,
                                   float* x) const {
  const float scale = already_scaled ? 1.0f : embedding_scale_;
  for (size_t i = 0; i < values.size(); ++i) x[i] = values[i] * scale;
}

void EmbeddingAndHead::FinalNorm(const float* x, int64_t num_rows, float* out) const {
  kernels::RmsNorm(x, norm_.data(), num_rows, hidden_, eps_, out);
}

Status EmbeddingAndHead::Logits(const float* x, const std::vector<int32_t>& logits_indices,
                                ThreadPool& pool, float* logits) const {
  const int64_t num_logits = static_cast<int64_t>(logits_indices.size());
  // selected: [num_logits, hidden]
  std::vector<float> selected(num_logits * hidden_);
  for (int64_t r = 0; r < num_logits; ++r) {
    const float* row = x + int64_t{logits_indices[r]} * hidden_;
    std::copy(row, row + hidden_, selected.data() + r * hidden_);
  }
  kernels::RmsNorm(selected.data(), norm_.data(), num_logits, hidden_, eps_, selected.data());
  if (tensor_parallel_ == nullptr) {
    kernels::Linear(*head_, selected.data(), num_logits, logits, pool);
  } else {
    VLLM_RETURN_IF_ERROR(GatherLogits(selected.data(), num_logits, pool, logits));
  }
  if (final_logit_softcap_ > 0) {
    const float cap = final_logit_softcap_;
    for (int64_t i = 0; i < num_logits * vocab_size_; ++i) {
      logits[i] = cap * std::tanh(logits[i] / cap);
    }
  }
  return Status::Ok();
}

Status EmbeddingAndHead::GatherLogits(const float* selected, int64_t num_logits, ThreadPool& pool,
                                      float* logits) const {
  // mine: [num_logits, padded_rows], this rank's vocabulary columns (zeros past its rows);
  // all: [size, num_logits, padded_rows]; rank r's column j is logit r * padded_rows + j.
  const int64_t padded = vocab_.padded_rows;
  const int size = tensor_parallel_->size();
  std::vector<float> local(num_logits * vocab_.num_rows);
  kernels::Linear(*head_, selected, num_logits, local.data(), pool);
  std::vector<float> mine(num_logits * padded, 0.0f);
  for (int64_t r = 0; r < num_logits; ++r) {
    std::copy_n(local.data() + r * vocab_.num_rows, vocab_.num_rows, mine.data() + r * padded);
  }
  std::vector<float> all(size * num_logits * padded);
  VLLM_RETURN_IF_ERROR(tensor_parallel_->AllGather(
      mine.data(), num_logits * padded * static_cast<int64_t>(sizeof(float)), all.data()));
  for (int rank = 0; rank < size; ++rank) {
    const VocabShard shard = VocabShardOf(vocab_size_, rank, size);
    for (int64_t r = 0; r < num_logits; ++r) {
      std::copy_n(all.data() + (rank * num_logits + r) * padded, shard.num_rows,
                  logits + r * vocab_size_ + shard.begin);
    }
  }
  return Status::Ok();
}

}  // namespace vllm
