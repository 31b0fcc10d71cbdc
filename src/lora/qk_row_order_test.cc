#include "lora/qk_row_order.h"

#include <gtest/gtest.h>

#include <numeric>

namespace vllm::lora {
namespace {

// Two heads of head_dim 8, one value per row (its HF row index): llama.cpp's order takes the
// pairs (i, i + 4) of each head side by side, as convert_hf_to_gguf.py's permute does.
TEST(QkRowOrder, PermutesEachHeadsHalvesIntoPairs) {
  std::vector<float> hf_rows(16);
  std::iota(hf_rows.begin(), hf_rows.end(), 0.0f);
  const std::vector<float> rope_rows = PermuteQkRowsForRope(hf_rows, 1, 2);
  EXPECT_EQ(rope_rows, (std::vector<float>{0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15}));
  EXPECT_EQ(UnpermuteQkRowsForRope(rope_rows, 1, 2), hf_rows);
}

TEST(QkRowOrder, MovesWholeRows) {
  // 1 head of 4 rows, 3 values a row: row r holds 10r, 10r + 1, 10r + 2.
  std::vector<float> hf_rows;
  for (int row = 0; row < 4; ++row) {
    for (int col = 0; col < 3; ++col) hf_rows.push_back(10.0f * row + col);
  }
  EXPECT_EQ(PermuteQkRowsForRope(hf_rows, 3, 1),
            (std::vector<float>{0, 1, 2, 20, 21, 22, 10, 11, 12, 30, 31, 32}));
}

}  // namespace
}  // namespace vllm::lora
