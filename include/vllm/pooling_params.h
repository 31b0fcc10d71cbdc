// vLLM's PoolingParams: what a pooling request (embed, classify, score, encode) asks of the
// model's pooler beyond what the model's own files fix (its pooling type, its head).
#pragma once

#include <cstdint>
#include <optional>

namespace vllm {

struct PoolingParams {
  // Keep only the last k prompt tokens (-1: the last max_model_len); unset: a longer prompt is
  // refused.
  std::optional<int64_t> truncate_prompt_tokens;
  // Matryoshka: the first `dimensions` values of the embedding, normalized again when
  // `normalize`. Must lie in [1, hidden_size].
  std::optional<int64_t> dimensions;
  // Embeddings: L2-normalize the output (default true).
  std::optional<bool> normalize;
  // Classification and scores: softmax over the labels, or sigmoid with one label (default
  // true); false: raw logits.
  std::optional<bool> use_activation;
};

}  // namespace vllm
