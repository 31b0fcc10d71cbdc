#include "model/layers/embedding_and_head.h"

#include <algorithm>

namespace vllm {

void LookUpEmbeddings(const GgufTensor& embedding, int64_t vocab_size, int64_t hidden,
                      const std::vector<int32_t>& token_ids, float* x) {
  const int64_t row_bytes = embedding.num_bytes / vocab_size;
  for (size_t t = 0; t < token_ids.size(); ++t) {
    kernels::DequantizeRow(embedding.type, embedding.data + token_ids[t] * row_bytes, hidden,
                           x + t * hidden);
  }
}

void SelectedRowsLogits(const float* x, int64_t hidden, const std::vector<int32_t>& logits_indices,
                        const std::vector<float>& norm, float eps,
                        const kernels::LinearWeight& head, ThreadPool& pool, float* logits) {
  const int64_t num_logits = static_cast<int64_t>(logits_indices.size());
  // selected: [num_logits, hidden]
  std::vector<float> selected(num_logits * hidden);
  for (int64_t r = 0; r < num_logits; ++r) {
    const float* row = x + int64_t{logits_indices[r]} * hidden;
    std::copy(row, row + hidden, selected.data() + r * hidden);
  }
  kernels::RmsNorm(selected.data(), norm.data(), num_logits, hidden, eps, selected.data());
  kernels::Linear(head, selected.data(), num_logits, logits, pool);
}

}  // namespace vllm
