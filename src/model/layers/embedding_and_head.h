// The two ends every decoder shares: the token-embedding lookup (token_embd.weight, of any weight
// type) and the final norm + output head (output.weight, or the embedding when tied) over only
// the rows whose logits are wanted.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/thread_pool.h"
#include "formats/gguf_file.h"
#include "kernels/ops.h"
#include "model/model_config.h"
#include "model/tensor_parallel.h"
#include "model/weight_loader.h"

namespace vllm {

class EmbeddingAndHead {
 public:
  // `embedding_scale` multiplies looked-up rows (Gemma: sqrt(hidden)). With `tensor_parallel`
  // (a group of N), the loader's token_embd and output hold this rank's rows of the vocabulary
  // (VocabShardOf): Embed sums the ranks' rows (a token's row is on one rank, zeros on the others)
  // and Logits gathers every rank's logits. Without `with_head` (a pipeline stage before the
  // last) only the embedding is loaded: Logits and FinalNorm must not be called.
  Status Load(WeightLoader& loader, const ModelConfig& config, float embedding_scale = 1.0f,
              dist::Communicator* tensor_parallel = nullptr, bool with_head = true);

  // x: [token_ids.size(), hidden]; token ids are checked by the caller.
  Status Embed(const std::vector<int32_t>& token_ids, float* x) const;
  // Given input embeddings in place of looked-up rows: x: [values.size() / hidden, hidden] =
  // values, times the embedding scale unless they are `already_scaled`.
  void ReplaceRows(std::span<const float> values, bool already_scaled, float* x) const;

  // logits: [logits_indices.size(), vocab_size] = head · RmsNorm(x[logits_indices]), soft-capped
  // by config.final_logit_softcap when set; x: [num_tokens, hidden].
  Status Logits(const float* x, const std::vector<int32_t>& logits_indices, ThreadPool& pool,
                float* logits) const;
  // out: [num_rows, hidden] = RmsNorm(x) with the final norm (decoders as embedders).
  void FinalNorm(const float* x, int64_t num_rows, float* out) const;

 private:
  // The vocabulary's rows of `head_` ([vocab.num_rows, hidden]) → logits: [num_logits,
  // vocab_size_], gathered from every rank.
  Status GatherLogits(const float* selected, int64_t num_logits, ThreadPool& pool,
                      float* logits) const;

  int64_t vocab_size_ = 0, hidden_ = 0;
  dist::Communicator* tensor_parallel_ = nullptr;
  VocabShard vocab_;  // the rows this rank holds (all of them without tensor parallel)
  float eps_ = 0.0f, embedding_scale_ = 1.0f, final_logit_softcap_ = 0.0f;
  const GgufTensor* embedding_ = nullptr;        // [vocab.num_rows, hidden], any supported type
  std::vector<float> norm_;                      // [hidden]
  std::unique_ptr<kernels::LinearWeight> head_;  // [vocab.num_rows, hidden]
};

}  // namespace vllm
