#include "lora/qk_row_order.h"

#include <algorithm>

namespace vllm::lora {
namespace {

// Moves whole rows: llama.cpp row (head, 2i + j) ⇄ HF row (head, i + j · head_dim/2).
std::vector<float> MoveRows(std::span<const float> rows, int64_t row_len, int64_t num_heads,
                            bool to_rope_order) {
  const int64_t num_rows = static_cast<int64_t>(rows.size()) / row_len;
  const int64_t head_dim = num_rows / num_heads;
  const int64_t half = head_dim / 2;
  std::vector<float> out(rows.size());
  for (int64_t row = 0; row < num_rows; ++row) {
    const int64_t head = row / head_dim, within = row % head_dim;
    const int64_t hf_row =
        head * head_dim + within / 2 + (within % 2) * half;  // row is llama.cpp's
    const int64_t from = to_rope_order ? hf_row : row;
    const int64_t to = to_rope_order ? row : hf_row;
    std::copy_n(rows.data() + from * row_len, row_len, out.data() + to * row_len);
  }
  return out;
}

}  // namespace

std::vector<float> PermuteQkRowsForRope(std::span<const float> rows, int64_t row_len,
                                        int64_t num_heads) {
  return MoveRows(rows, row_len, num_heads, true);
}

std::vector<float> UnpermuteQkRowsForRope(std::span<const float> rows, int64_t row_len,
                                          int64_t num_heads) {
  return MoveRows(rows, row_len, num_heads, false);
}

}  // namespace vllm::lora
