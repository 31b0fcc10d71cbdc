// The pooler: one sequence's last hidden states → its output vector, and the activations and
// normalization applied after it (vLLM's Pooler with PoolerNormalize / PoolerActivation). Every
// result depends only on the sequence's own rows, summed in a fixed order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/pooling_config.h"

namespace vllm {

// hidden: [num_tokens, hidden_size], one sequence's rows in position order →
//   kCls: row 0; kLast: the last row; kMean: the mean of the rows; kAll: every row, flattened
//   ([num_tokens * hidden_size]). kUnset is a caller error (resolve it first).
std::vector<float> PoolSequence(PoolingType type, const float* hidden, int64_t num_tokens,
                                int64_t hidden_size);

// v / max(‖v‖₂, 1e-12), as torch.nn.functional.normalize.
void NormalizeL2(std::span<float> values);
// a·b / max(‖a‖‖b‖, 1e-8) in double (vLLM's bi-encoder score); vectors of equal length.
float CosineSimilarity(std::span<const float> a, std::span<const float> b);
// softmax over the values, in place.
void SoftmaxInPlace(std::span<float> values);
// 1 / (1 + exp(-v)) for each value, in place.
void SigmoidInPlace(std::span<float> values);

}  // namespace vllm
