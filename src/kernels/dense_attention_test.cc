// AttendAllKeys: the AVX-512 path (where the CPU has it) and the scalar path against attention in
// double precision over head sizes of 1 to 8 SIMD chunks and key counts around the 16- and 32-key
// chunk edges, with strided rows; and a row's result is bit-identical alone and among others.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "kernels/attention_internal.h"
#include "kernels/ops.h"

namespace vllm::kernels {
namespace {

// num_tokens rows of `width` values with one head's head_dim values at offset `head`.
struct Rows {
  int64_t num_tokens, width, head_dim, head;
  std::vector<float> q, k, v;
};

Rows RandomRows(int64_t num_tokens, int64_t head_dim, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Rows rows{num_tokens, 3 * head_dim, head_dim, head_dim, {}, {}, {}};
  for (auto* x : {&rows.q, &rows.k, &rows.v}) {
    x->resize(num_tokens * rows.width);
    for (float& value : *x) value = uniform(generator);
  }
  return rows;
}

DenseAttention Attention(const Rows& rows, float scale, std::vector<float>* out) {
  out->assign(rows.num_tokens * rows.width, 0.0f);
  return {.q = rows.q.data() + rows.head,
          .q_row_stride = rows.width,
          .num_rows = rows.num_tokens,
          .k = rows.k.data() + rows.head,
          .v = rows.v.data() + rows.head,
          .kv_row_stride = rows.width,
          .num_keys = rows.num_tokens,
          .head_dim = rows.head_dim,
          .scale = scale,
          .out = out->data() + rows.head,
          .out_row_stride = rows.width};
}

double Expected(const Rows& rows, float scale, int64_t t, int64_t d) {
  auto at = [&](const std::vector<float>& x, int64_t row, int64_t i) {
    return double{x[row * rows.width + rows.head + i]};
  };
  std::vector<double> logits(rows.num_tokens);
  double max = -INFINITY, sum = 0.0, result = 0.0;
  for (int64_t j = 0; j < rows.num_tokens; ++j) {
    double dot = 0.0;
    for (int64_t i = 0; i < rows.head_dim; ++i) dot += at(rows.q, t, i) * at(rows.k, j, i);
    max = std::max(max, logits[j] = dot * scale);
  }
  for (double& logit : logits) sum += (logit = std::exp(logit - max));
  for (int64_t j = 0; j < rows.num_tokens; ++j) result += logits[j] / sum * at(rows.v, j, d);
  return result;
}

using Path = void (*)(const DenseAttention&, float*);
std::vector<std::pair<const char*, Path>> Paths(int64_t head_dim) {
  std::vector<std::pair<const char*, Path>> paths = {{"scalar", AttendAllKeysScalar},
                                                     {"dispatched", AttendAllKeys}};
  if (HasVectorDenseAttention(head_dim)) paths.push_back({"avx512", AttendAllKeysAvx512});
  return paths;
}

TEST(DenseAttentionTest, PathsMatchDoublePrecision) {
  for (int64_t head_dim : {16, 24, 32, 48, 64, 128}) {
    for (int64_t num_tokens : {1, 5, 16, 31, 32, 33, 130}) {
      const Rows rows = RandomRows(num_tokens, head_dim, static_cast<uint32_t>(num_tokens));
      const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
      for (const auto& [name, path] : Paths(head_dim)) {
        std::vector<float> out;
        std::vector<float> scratch(DenseAttentionScratchFloats(num_tokens, head_dim));
        path(Attention(rows, scale, &out), scratch.data());
        for (int64_t t = 0; t < num_tokens; ++t) {
          for (int64_t d = 0; d < head_dim; ++d) {
            ASSERT_NEAR(out[t * rows.width + rows.head + d], Expected(rows, scale, t, d), 2e-6)
                << name << " head_dim " << head_dim << " tokens " << num_tokens << " row " << t;
          }
        }
        // Only the head's columns are written.
        EXPECT_EQ(out[0], 0.0f) << name;
      }
    }
  }
}

TEST(DenseAttentionTest, RowIsBitIdenticalAloneAndAmongOthers) {
  for (int64_t head_dim : {24, 32, 64}) {
    const Rows rows = RandomRows(37, head_dim, 3);
    for (const auto& [name, path] : Paths(head_dim)) {
      std::vector<float> all, scratch(DenseAttentionScratchFloats(37, head_dim));
      path(Attention(rows, 0.2f, &all), scratch.data());
      for (int64_t t : {0, 5, 36}) {
        std::vector<float> alone;
        DenseAttention one = Attention(rows, 0.2f, &alone);
        one.q += t * rows.width;
        one.out += t * rows.width;
        one.num_rows = 1;
        path(one, scratch.data());
        for (int64_t d = 0; d < head_dim; ++d) {
          ASSERT_EQ(alone[t * rows.width + rows.head + d], all[t * rows.width + rows.head + d])
              << name << " head_dim " << head_dim << " row " << t;
        }
      }
    }
  }
}

}  // namespace
}  // namespace vllm::kernels
