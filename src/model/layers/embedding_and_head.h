// The two ends every decoder shares: the token-embedding lookup (from a tensor of any weight
// type) and the final norm + output head over only the rows whose logits are wanted.
#pragma once

#include <cstdint>
#include <vector>

#include "common/thread_pool.h"
#include "formats/gguf_file.h"
#include "kernels/ops.h"

namespace vllm {

// x: [token_ids.size(), hidden] = rows of embedding ([vocab_size, hidden], ggml shape
// {hidden, vocab_size}); token ids are checked by the caller.
void LookUpEmbeddings(const GgufTensor& embedding, int64_t vocab_size, int64_t hidden,
                      const std::vector<int32_t>& token_ids, float* x);

// logits: [logits_indices.size(), head.rows()] = head · RmsNorm(x[logits_indices], norm, eps);
// x: [num_tokens, hidden].
void SelectedRowsLogits(const float* x, int64_t hidden, const std::vector<int32_t>& logits_indices,
                        const std::vector<float>& norm, float eps,
                        const kernels::LinearWeight& head, ThreadPool& pool, float* logits);

}  // namespace vllm
