// What the runner computes for a pooling request from its sequence's last hidden states: the
// pooled vector (the model's pooling type), then either the classification head and its
// activation, or the model's Dense projections (Model::ProjectPooled), Matryoshka truncation and
// L2 normalization (vLLM's Pooler heads).
#pragma once

#include <cstdint>
#include <vector>

#include "common/expected.h"
#include "model/model.h"
#include "model/pooling_config.h"

namespace vllm {

enum class PoolingActivation { kNone, kSoftmax, kSigmoid };

// Resolved by the engine from the model's config, the task and the request's PoolingParams.
struct PoolingSpec {
  PoolingType pooling_type = PoolingType::kCls;  // never kUnset
  bool classify = false;  // run the model's classification head over the pooled vector
  PoolingActivation activation = PoolingActivation::kNone;  // over the head's scores
  bool normalize = false;               // L2-normalize the embedding (each token's, for kAll)
  int64_t dimensions = 0;               // > 0: keep each embedding's first `dimensions` values
  std::vector<int32_t> token_type_ids;  // [prompt tokens] segment ids; empty: all 0
};

// hidden: [num_tokens, hidden_size], one sequence's rows → its output: the scores
// [num_labels] when classifying, else the embedding ([dimensions or hidden_size], times
// num_tokens for kAll).
Expected<std::vector<float>> PoolOutput(const Model& model, const PoolingSpec& spec,
                                        const float* hidden, int64_t num_tokens);

}  // namespace vllm
