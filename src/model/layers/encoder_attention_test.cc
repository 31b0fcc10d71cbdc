// EncoderAttention (tiled, online softmax over kernels::AttendTile) against a scalar reference in
// double with a plain two-pass softmax, over packed batches of sequences shorter and longer than
// a tile, with grouped KV heads; and a sequence's rows are bit-identical alone and in a batch.
#include "model/layers/encoder_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace vllm {
namespace {

struct Packed {
  std::vector<int32_t> query_start_loc;
  std::vector<float> q, k, v;
};

Packed RandomPacked(const std::vector<int32_t>& lengths, const EncoderAttentionShape& shape,
                    uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Packed packed;
  packed.query_start_loc = {0};
  for (int32_t length : lengths)
    packed.query_start_loc.push_back(packed.query_start_loc.back() + length);
  const int64_t num_tokens = packed.query_start_loc.back();
  auto fill = [&](std::vector<float>* x, int64_t heads) {
    x->resize(num_tokens * heads * shape.head_dim);
    for (float& value : *x) value = uniform(generator);
  };
  fill(&packed.q, shape.num_heads);
  fill(&packed.k, shape.num_kv_heads);
  fill(&packed.v, shape.num_kv_heads);
  return packed;
}

// out[t, h] = Σ_j softmax_j(q·k_j · scale) v_j over t's sequence, in double.
std::vector<double> ReferenceAttention(const Packed& p, const EncoderAttentionShape& shape) {
  const int64_t d = shape.head_dim, group = shape.num_heads / shape.num_kv_heads;
  std::vector<double> out(p.q.size(), 0.0);
  for (size_t s = 0; s + 1 < p.query_start_loc.size(); ++s) {
    const int64_t begin = p.query_start_loc[s], end = p.query_start_loc[s + 1];
    for (int64_t t = begin; t < end; ++t) {
      for (int64_t h = 0; h < shape.num_heads; ++h) {
        const int64_t kv_head = h / group;
        std::vector<double> logits;
        for (int64_t j = begin; j < end; ++j) {
          double dot = 0.0;
          for (int64_t i = 0; i < d; ++i) {
            dot += double{p.q[(t * shape.num_heads + h) * d + i]} *
                   p.k[(j * shape.num_kv_heads + kv_head) * d + i];
          }
          logits.push_back(dot * shape.scale);
        }
        double max = logits[0], sum = 0.0;
        for (double logit : logits) max = std::max(max, logit);
        for (double& logit : logits) sum += (logit = std::exp(logit - max));
        for (int64_t j = begin; j < end; ++j) {
          for (int64_t i = 0; i < d; ++i) {
            out[(t * shape.num_heads + h) * d + i] +=
                logits[j - begin] / sum * p.v[(j * shape.num_kv_heads + kv_head) * d + i];
          }
        }
      }
    }
  }
  return out;
}

TEST(EncoderAttentionTest, MatchesScalarReference) {
  ThreadPool pool({.num_threads = 3});
  for (const EncoderAttentionShape shape :
       {EncoderAttentionShape{.num_heads = 4, .num_kv_heads = 4, .head_dim = 16, .scale = 0.25f},
        EncoderAttentionShape{.num_heads = 6, .num_kv_heads = 2, .head_dim = 24, .scale = 0.2f}}) {
    const Packed packed = RandomPacked({1, 5, 16, 17, 40, 150}, shape, 7);
    std::vector<float> out(packed.q.size());
    EncoderAttention(packed.query_start_loc, packed.q.data(), packed.k.data(), packed.v.data(),
                     shape, pool, out.data());
    const std::vector<double> expected = ReferenceAttention(packed, shape);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], expected[i], 1e-5) << i;
  }
}

TEST(EncoderAttentionTest, SequenceIsBitIdenticalAloneAndInABatch) {
  ThreadPool pool({.num_threads = 3});
  const EncoderAttentionShape shape = {
      .num_heads = 4, .num_kv_heads = 2, .head_dim = 16, .scale = 0.25f};
  const Packed batch = RandomPacked({3, 33, 9}, shape, 11);
  std::vector<float> batch_out(batch.q.size());
  EncoderAttention(batch.query_start_loc, batch.q.data(), batch.k.data(), batch.v.data(), shape,
                   pool, batch_out.data());
  // The middle sequence alone: its rows [3, 36) of q, k and v.
  const int64_t q_row = shape.num_heads * shape.head_dim;
  const int64_t kv_row = shape.num_kv_heads * shape.head_dim;
  const std::vector<int32_t> alone_loc = {0, 33};
  std::vector<float> alone_out(33 * q_row);
  EncoderAttention(alone_loc, batch.q.data() + 3 * q_row, batch.k.data() + 3 * kv_row,
                   batch.v.data() + 3 * kv_row, shape, pool, alone_out.data());
  for (int64_t i = 0; i < 33 * q_row; ++i) ASSERT_EQ(alone_out[i], batch_out[3 * q_row + i]) << i;
}

}  // namespace
}  // namespace vllm
