#include "model/layers/paged_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace vllm {
namespace {

// Naive causal GQA over contiguous per-sequence K/V, in double precision; with a window W > 0
// the token at position p sees only the keys at [max(0, p - W + 1), p].
// q: [num_tokens, num_heads, head_dim]; keys/values: per sequence [seq_len, kv_heads, head_dim]
std::vector<float> NaiveAttention(const ForwardBatch& batch, const std::vector<float>& q,
                                  const std::vector<std::vector<float>>& keys,
                                  const std::vector<std::vector<float>>& values, int num_heads,
                                  int num_kv_heads, int head_dim, float scale,
                                  int sliding_window = 0) {
  std::vector<float> out(q.size());
  for (int64_t s = 0; s < batch.num_seqs(); ++s) {
    for (int t = batch.query_start_loc[s]; t < batch.query_start_loc[s + 1]; ++t) {
      for (int h = 0; h < num_heads; ++h) {
        int kv_head = h / (num_heads / num_kv_heads);
        const float* query = &q[(t * num_heads + h) * head_dim];
        const int first =
            sliding_window > 0 ? std::max(0, batch.positions[t] - sliding_window + 1) : 0;
        std::vector<double> weights;  // [positions[t] + 1 - first]
        double max_score = -1e300;
        for (int j = first; j <= batch.positions[t]; ++j) {
          const float* key = &keys[s][(j * num_kv_heads + kv_head) * head_dim];
          double dot = 0;
          for (int d = 0; d < head_dim; ++d) dot += double{query[d]} * key[d];
          weights.push_back(dot * scale);
          max_score = std::max(max_score, weights.back());
        }
        double sum = 0;
        for (double& w : weights) sum += (w = std::exp(w - max_score));
        for (int d = 0; d < head_dim; ++d) {
          double acc = 0;
          for (size_t j = 0; j < weights.size(); ++j) {
            acc +=
                weights[j] / sum * values[s][((first + j) * num_kv_heads + kv_head) * head_dim + d];
          }
          out[(t * num_heads + h) * head_dim + d] = static_cast<float>(acc);
        }
      }
    }
  }
  return out;
}

// Checks PagedAttention with `sliding_window` (0: full causal) against NaiveAttention on two
// sequences in scattered blocks: one all-new (prefill), one with 2 new tokens after 11 cached.
void ExpectMatchesNaiveAttention(int sliding_window) {
  const int num_heads = 4, num_kv_heads = 2, head_dim = 16, block_size = 4;
  auto kv = KvStorage::Create({.num_layers = 2,
                               .num_blocks = 32,
                               .block_size = block_size,
                               .num_kv_heads = num_kv_heads,
                               .head_dim = head_dim});
  ASSERT_TRUE(kv.ok());
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  // Sequence 0: 9 tokens, all new (prefill). Sequence 1: 13 tokens of which the last 2 are new.
  const std::vector<int> seq_lens = {9, 13};
  const std::vector<int> num_new = {9, 2};
  const std::vector<std::vector<int32_t>> tables = {{7, 2, 30}, {5, 11, 0, 19}};
  const int row = num_kv_heads * head_dim;
  std::vector<std::vector<float>> keys(2), values(2);
  ForwardBatch batch;
  batch.query_start_loc = {0};
  std::vector<float> new_k, new_v;
  for (int s = 0; s < 2; ++s) {
    keys[s].resize(seq_lens[s] * row);
    values[s].resize(seq_lens[s] * row);
    for (auto& x : keys[s]) x = normal(rng);
    for (auto& x : values[s]) x = normal(rng);
    for (int p = 0; p < seq_lens[s]; ++p) {
      int64_t slot = int64_t{tables[s][p / block_size]} * block_size + p % block_size;
      bool is_new = p >= seq_lens[s] - num_new[s];
      if (!is_new) {  // already cached
        std::copy_n(&keys[s][p * row], row, (*kv)->key(1, slot));
        std::copy_n(&values[s][p * row], row, (*kv)->value(1, slot));
        continue;
      }
      batch.token_ids.push_back(0);
      batch.positions.push_back(p);
      batch.slot_mapping.push_back(slot);
      new_k.insert(new_k.end(), &keys[s][p * row], &keys[s][p * row] + row);
      new_v.insert(new_v.end(), &values[s][p * row], &values[s][p * row] + row);
    }
    batch.query_start_loc.push_back(static_cast<int32_t>(batch.token_ids.size()));
    batch.seq_lens.push_back(seq_lens[s]);
    batch.block_tables.push_back(tables[s]);
  }
  ASSERT_TRUE(ValidateForwardBatch(batch, **kv).ok());
  std::vector<float> q(batch.num_tokens() * num_heads * head_dim);
  for (auto& x : q) x = normal(rng);
  WriteKv(batch, 1, new_k.data(), new_v.data(), **kv);
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  std::vector<float> out(q.size());
  const float scale = 0.25f;
  PagedAttention(batch, 1, q.data(), num_heads, scale, **kv, pool, out.data(), sliding_window);
  auto expected = NaiveAttention(batch, q, keys, values, num_heads, num_kv_heads, head_dim, scale,
                                 sliding_window);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], expected[i], 1e-5) << i;
}

TEST(PagedAttentionTest, MatchesNaiveAttentionAcrossScatteredBlocks) {
  ExpectMatchesNaiveAttention(/*sliding_window=*/0);
}

TEST(PagedAttentionTest, SlidingWindowAttendsToOnlyTheWindowsKeys) {
  // Windows shorter than both sequences, spanning block boundaries (block_size 4).
  ExpectMatchesNaiveAttention(/*sliding_window=*/5);
  ExpectMatchesNaiveAttention(/*sliding_window=*/1);
  // A window longer than every sequence is full causal attention.
  ExpectMatchesNaiveAttention(/*sliding_window=*/100);
}

}  // namespace
}  // namespace vllm
