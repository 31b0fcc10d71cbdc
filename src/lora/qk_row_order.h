// The two orders of the rows of q and k (and so of their lora_B): Hugging Face's, where each
// head's rotary pairs are (i, i + head_dim/2), and llama.cpp's, whose converter permutes a "llama"
// GGUF's q / k rows per head so that each pair is adjacent (2i, 2i + 1):
//
//   one head, head_dim = 8     HF row:   0 1 2 3 | 4 5 6 7
//   llama.cpp row r holds HF row:        0 4 1 5 2 6 3 7    (r = 2i + j ← HF row i + j·head_dim/2)
//
// k permutes with num_kv_heads, q with num_heads; a head's rows never leave it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace vllm::lora {

// rows: [num_heads · head_dim, row_len] in HF order → the same rows in llama.cpp's order.
std::vector<float> PermuteQkRowsForRope(std::span<const float> rows, int64_t row_len,
                                        int64_t num_heads);
// The inverse: llama.cpp's order → HF order.
std::vector<float> UnpermuteQkRowsForRope(std::span<const float> rows, int64_t row_len,
                                          int64_t num_heads);

}  // namespace vllm::lora
