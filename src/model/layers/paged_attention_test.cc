#include "model/layers/paged_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <random>

#include "kernels/ops.h"

namespace vllm {
namespace {

constexpr int kHeadDim = 16;
constexpr int kBlockSize = 4;
constexpr int kLayer = 1;

using kernels::KvCacheDtype;

constexpr KvCacheDtype kAllDtypes[] = {KvCacheDtype::kFloat32, KvCacheDtype::kBFloat16,
                                       KvCacheDtype::kFp8E4m3, KvCacheDtype::kInt8};

struct ProblemOptions {
  KvCacheDtype dtype = KvCacheDtype::kFloat32;
  int block_size = kBlockSize;
  // Per sequence: its length and how many of its last tokens the batch computes. By default
  // sequence 0 has 9 tokens, all new (prefill); sequence 1 has 13 of which the last 2 are new;
  // sequence 2 has 6 of which the last is new (decode).
  std::vector<int> seq_lens = {9, 13, 6};
  std::vector<int> num_new = {9, 2, 1};
  int head_dim = kHeadDim;
};

// Random K/V for the sequences in scattered blocks, already cached or written by the batch, and
// random queries for the batch's tokens. Keys, values and queries depend only on the sequence
// and the position (not on num_new or the block size), so two problems differing in those agree
// on every token they share.
struct AttentionProblem {
  int num_heads;
  int num_kv_heads;
  int head_dim;
  std::unique_ptr<KvStorage> kv;
  ForwardBatch batch;
  // Per sequence [seq_len, num_kv_heads, head_dim], as stored: what the storage's dtype decodes to.
  std::vector<std::vector<float>> keys, values;
  std::vector<float> q;  // [num_tokens, num_heads, head_dim]
};

// `values` rounded through `dtype` row by row (one row per KV head), as KvStorage stores them.
void RoundThroughDtype(KvCacheDtype dtype, int head_dim, std::vector<float>& values) {
  std::vector<uint8_t> stored(head_dim * sizeof(float));
  for (size_t row = 0; row < values.size(); row += head_dim) {
    float scale = 0.0f;
    kernels::QuantizeKvRow(dtype, &values[row], head_dim, stored.data(), &scale);
    kernels::DequantizeKvRow(dtype, stored.data(), scale, head_dim, &values[row]);
  }
}

AttentionProblem MakeProblem(int num_heads, int num_kv_heads, const ProblemOptions& options = {}) {
  const int head_dim = options.head_dim;
  AttentionProblem problem{
      .num_heads = num_heads, .num_kv_heads = num_kv_heads, .head_dim = head_dim};
  const int block_size = options.block_size;
  int num_blocks = 1;  // block 0 left unused
  for (int len : options.seq_lens) num_blocks += (len + block_size - 1) / block_size;
  auto kv = KvStorage::Create({.num_layers = 2,
                               .num_blocks = num_blocks,
                               .block_size = block_size,
                               .num_kv_heads = num_kv_heads,
                               .head_dim = head_dim,
                               .dtype = options.dtype});
  EXPECT_TRUE(kv.ok());
  problem.kv = std::move(*kv);
  // Block ids 1.. in a scattered order.
  std::vector<int32_t> block_ids(num_blocks - 1);
  std::iota(block_ids.begin(), block_ids.end(), 1);
  std::shuffle(block_ids.begin(), block_ids.end(), std::mt19937(5));
  const int row = num_kv_heads * head_dim;
  ForwardBatch& batch = problem.batch;
  batch.query_start_loc = {0};
  KvGroupTables& group = batch.kv_groups.emplace_back();  // one group of both layers
  std::vector<float> new_k, new_v;
  size_t next_block = 0;
  for (size_t s = 0; s < options.seq_lens.size(); ++s) {
    const int seq_len = options.seq_lens[s];
    auto& keys = problem.keys.emplace_back(seq_len * row);
    auto& values = problem.values.emplace_back(seq_len * row);
    std::vector<float> queries(seq_len * num_heads * head_dim);
    // One generator per sequence and tensor, so a longer sequence extends a shorter one.
    for (auto [tensor, seed] : {std::pair{&keys, 1}, {&values, 2}, {&queries, 3}}) {
      std::mt19937 rng(static_cast<uint32_t>(10 * s + seed));
      std::normal_distribution<float> normal;
      for (auto& x : *tensor) x = normal(rng);
    }
    RoundThroughDtype(options.dtype, head_dim, keys);
    RoundThroughDtype(options.dtype, head_dim, values);
    std::vector<int32_t>& table = group.block_tables.emplace_back();
    for (int b = 0; b < (seq_len + block_size - 1) / block_size; ++b) {
      table.push_back(block_ids[next_block++]);
    }
    for (int p = 0; p < seq_len; ++p) {
      int64_t slot = int64_t{table[p / block_size]} * block_size + p % block_size;
      bool is_new = p >= seq_len - options.num_new[s];
      if (!is_new) {  // already cached
        problem.kv->Write(kLayer, slot, &keys[p * row], &values[p * row]);
        continue;
      }
      batch.token_ids.push_back(0);
      batch.positions.push_back(p);
      group.slot_mapping.push_back(slot);
      new_k.insert(new_k.end(), &keys[p * row], &keys[p * row] + row);
      new_v.insert(new_v.end(), &values[p * row], &values[p * row] + row);
      problem.q.insert(problem.q.end(), &queries[p * num_heads * head_dim],
                       &queries[(p + 1) * num_heads * head_dim]);
    }
    batch.query_start_loc.push_back(static_cast<int32_t>(batch.token_ids.size()));
    batch.seq_lens.push_back(seq_len);
  }
  EXPECT_TRUE(ValidateForwardBatch(batch, *problem.kv).ok());
  WriteKv(batch, kLayer, new_k.data(), new_v.data(), *problem.kv);
  return problem;
}

std::vector<float> RunPagedAttention(AttentionProblem& problem, const AttentionOptions& options) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  std::vector<float> out(problem.q.size());
  PagedAttention(problem.batch, kLayer, problem.q.data(), problem.num_heads, options, *problem.kv,
                 pool, out.data());
  return out;
}

// Naive causal GQA over the contiguous per-sequence K/V, in double precision: logits
// q·k · scale, soft-capped to C·tanh(logit / C) when C > 0; with a window W > 0 the token at
// position p sees only the keys at [max(0, p - W + 1), p]; head h's sink, if any, is one more
// logit in the softmax whose weight is dropped.
std::vector<float> NaiveAttention(const AttentionProblem& problem,
                                  const AttentionOptions& options) {
  const ForwardBatch& batch = problem.batch;
  const int num_heads = problem.num_heads;
  const int num_kv_heads = problem.num_kv_heads;
  const int head_dim = problem.head_dim;
  const int window = static_cast<int>(options.sliding_window);
  std::vector<float> out(problem.q.size());
  for (int64_t s = 0; s < batch.num_seqs(); ++s) {
    for (int t = batch.query_start_loc[s]; t < batch.query_start_loc[s + 1]; ++t) {
      for (int h = 0; h < num_heads; ++h) {
        int kv_head = h / (num_heads / num_kv_heads);
        const float* query = &problem.q[(t * num_heads + h) * head_dim];
        const int first = window > 0 ? std::max(0, batch.positions[t] - window + 1) : 0;
        std::vector<double> logits;  // [positions[t] + 1 - first], then the sink's
        for (int j = first; j <= batch.positions[t]; ++j) {
          const float* key = &problem.keys[s][(j * num_kv_heads + kv_head) * head_dim];
          double dot = 0;
          for (int d = 0; d < head_dim; ++d) dot += double{query[d]} * key[d];
          double logit = dot * options.scale;
          if (options.logit_softcap > 0) {
            logit = options.logit_softcap * std::tanh(logit / options.logit_softcap);
          }
          logits.push_back(logit);
        }
        const size_t context_len = logits.size();
        if (options.sinks != nullptr) logits.push_back(options.sinks[h]);
        const double max_logit = *std::max_element(logits.begin(), logits.end());
        double sum = 0;
        for (double& w : logits) sum += (w = std::exp(w - max_logit));
        for (int d = 0; d < head_dim; ++d) {
          double acc = 0;
          for (size_t j = 0; j < context_len; ++j) {
            acc += logits[j] / sum *
                   problem.values[s][((first + j) * num_kv_heads + kv_head) * head_dim + d];
          }
          out[(t * num_heads + h) * head_dim + d] = static_cast<float>(acc);
        }
      }
    }
  }
  return out;
}

void ExpectMatchesNaiveAttention(int num_heads, int num_kv_heads, const AttentionOptions& options,
                                 const ProblemOptions& problem_options = {},
                                 float tolerance = 1e-5f) {
  AttentionProblem problem = MakeProblem(num_heads, num_kv_heads, problem_options);
  std::vector<float> out = RunPagedAttention(problem, options);
  std::vector<float> expected = NaiveAttention(problem, options);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], expected[i], tolerance) << i;
}

// [num_heads] sink logits spread around the size of the attention logits.
std::vector<float> RandomSinks(int num_heads) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> sinks(num_heads);
  for (auto& x : sinks) x = normal(rng);
  return sinks;
}

TEST(PagedAttentionTest, MatchesNaiveAttentionAcrossScatteredBlocks) {
  ExpectMatchesNaiveAttention(4, 2, {.scale = 0.25f});
  ExpectMatchesNaiveAttention(8, 2, {.scale = 0.25f});
  ExpectMatchesNaiveAttention(3, 3, {.scale = 0.25f});
}

TEST(PagedAttentionTest, SlidingWindowAttendsToOnlyTheWindowsKeys) {
  // Windows shorter than the sequences, spanning block boundaries (block_size 4).
  ExpectMatchesNaiveAttention(4, 2, {.scale = 0.25f, .sliding_window = 5});
  ExpectMatchesNaiveAttention(4, 2, {.scale = 0.25f, .sliding_window = 1});
  // A window longer than every sequence is full causal attention.
  ExpectMatchesNaiveAttention(4, 2, {.scale = 0.25f, .sliding_window = 100});
}

TEST(PagedAttentionTest, ASlidingGroupIsReadOnlyInsideTheWindowThroughItsOwnTables) {
  // Layer 0 full attention, layer 1 sliding (W = 5): two KV cache groups, block 0 the null block.
  // One sequence of 13 tokens, the last 2 new: they see positions [7, 12], blocks 1 to 3.
  constexpr int kWindow = 5;
  constexpr int kSeqLen = 13;
  constexpr int kNumNew = 2;
  AttentionProblem problem{.num_heads = 4, .num_kv_heads = 2, .head_dim = kHeadDim};
  auto kv =
      KvStorage::Create({.num_layers = 2,
                         .num_blocks = 32,
                         .block_size = kBlockSize,
                         .num_kv_heads = problem.num_kv_heads,
                         .head_dim = kHeadDim,
                         .layout = KvCacheLayoutFromWindows(std::vector<int64_t>{0, kWindow})});
  ASSERT_TRUE(kv.ok()) << kv.error();
  problem.kv = std::move(*kv);
  const int row = problem.num_kv_heads * kHeadDim;
  // NaN in every row: a row read that no position of the window put there poisons the output.
  for (int64_t block = 0; block < 32; ++block) {
    for (int64_t layer = 0; layer < 2; ++layer) {
      for (int64_t offset = 0; offset < kBlockSize; ++offset) {
        for (int64_t h = 0; h < problem.num_kv_heads; ++h) {
          std::fill_n(problem.kv->key(layer, block, offset, h), kHeadDim, std::nanf(""));
          std::fill_n(problem.kv->value(layer, block, offset, h), kHeadDim, std::nanf(""));
        }
      }
    }
  }
  const std::vector<std::vector<int32_t>> tables = {{6, 2, 12, 20},
                                                    {KvStorage::kNullBlockId, 9, 14, 3}};
  const std::vector<int32_t> new_tokens(kNumNew, 0);
  ASSERT_TRUE(
      AppendSequence(new_tokens, kSeqLen - kNumNew, tables, kBlockSize, problem.batch).ok());
  ASSERT_TRUE(ValidateForwardBatch(problem.batch, *problem.kv).ok());
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  auto& keys = problem.keys.emplace_back(kSeqLen * row);
  auto& values = problem.values.emplace_back(kSeqLen * row);
  for (auto& x : keys) x = normal(rng);
  for (auto& x : values) x = normal(rng);
  for (int p = kSeqLen - kNumNew - kWindow + 1; p < kSeqLen - kNumNew; ++p) {  // cached, in window
    for (int64_t h = 0; h < problem.num_kv_heads; ++h) {
      const int32_t block = tables[1][p / kBlockSize];
      std::copy_n(&keys[p * row + h * kHeadDim], kHeadDim,
                  problem.kv->key(1, block, p % kBlockSize, h));
      std::copy_n(&values[p * row + h * kHeadDim], kHeadDim,
                  problem.kv->value(1, block, p % kBlockSize, h));
    }
  }
  const int first_new = (kSeqLen - kNumNew) * row;
  WriteKv(problem.batch, 1, &keys[first_new], &values[first_new], *problem.kv);
  problem.q.resize(kNumNew * problem.num_heads * kHeadDim);
  for (auto& x : problem.q) x = normal(rng);
  const AttentionOptions options = {.scale = 0.25f, .sliding_window = kWindow};
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  std::vector<float> out(problem.q.size());
  PagedAttention(problem.batch, 1, problem.q.data(), problem.num_heads, options, *problem.kv, pool,
                 out.data());
  std::vector<float> expected = NaiveAttention(problem, options);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], expected[i], 1e-5) << i;
  // Position 11 went to layer 1's row at offset 3 of block tables[1][2], not of tables[0][2].
  EXPECT_EQ(problem.kv->key(1, tables[1][2], 3, 0)[0], keys[first_new]);
  EXPECT_TRUE(std::isnan(problem.kv->key(1, tables[0][2], 3, 0)[0]));
}

TEST(PagedAttentionTest, SinksMatchNaiveAttention) {
  for (auto [num_heads, num_kv_heads] : {std::pair{4, 2}, {8, 2}, {3, 3}}) {
    SCOPED_TRACE(testing::Message() << num_heads << " heads, " << num_kv_heads << " KV heads");
    const std::vector<float> sinks = RandomSinks(num_heads);
    for (int64_t window : {0, 5, 1}) {
      SCOPED_TRACE(testing::Message() << "window " << window);
      ExpectMatchesNaiveAttention(
          num_heads, num_kv_heads,
          {.scale = 0.25f, .sliding_window = window, .sinks = sinks.data()});
    }
  }
}

TEST(PagedAttentionTest, SoftcapMatchesNaiveAttention) {
  // scale 1 makes the logits N(0, 16)-sized, so a cap of 5 bends most of them.
  for (auto [num_heads, num_kv_heads] : {std::pair{4, 2}, {8, 2}}) {
    for (int64_t window : {0, 5}) {
      SCOPED_TRACE(testing::Message() << num_heads << " heads, window " << window);
      ExpectMatchesNaiveAttention(num_heads, num_kv_heads,
                                  {.scale = 1.0f, .sliding_window = window, .logit_softcap = 5.0f});
    }
  }
  // With sinks too (no model has both, but they compose).
  const std::vector<float> sinks = RandomSinks(4);
  ExpectMatchesNaiveAttention(4, 2, {.scale = 1.0f, .logit_softcap = 5.0f, .sinks = sinks.data()});
}

TEST(PagedAttentionTest, SoftcapChangesTheOutput) {
  AttentionProblem problem = MakeProblem(4, 2);
  std::vector<float> capped = RunPagedAttention(problem, {.scale = 1.0f, .logit_softcap = 5.0f});
  std::vector<float> uncapped = RunPagedAttention(problem, {.scale = 1.0f});
  double max_difference = 0;
  for (size_t i = 0; i < capped.size(); ++i) {
    max_difference = std::max(max_difference, double{std::abs(capped[i] - uncapped[i])});
  }
  EXPECT_GT(max_difference, 0.1);
}

TEST(PagedAttentionTest, NegativeInfinitySinksEqualNoSinks) {
  AttentionProblem problem = MakeProblem(4, 2);
  const std::vector<float> sinks(4, -std::numeric_limits<float>::infinity());
  for (int64_t window : {0, 5}) {
    std::vector<float> with_sinks = RunPagedAttention(
        problem, {.scale = 0.25f, .sliding_window = window, .sinks = sinks.data()});
    std::vector<float> without =
        RunPagedAttention(problem, {.scale = 0.25f, .sliding_window = window});
    EXPECT_EQ(with_sinks, without) << "window " << window;
  }
}

TEST(PagedAttentionTest, LargeSinkDrivesTheOutputToZero) {
  AttentionProblem problem = MakeProblem(4, 2);
  // Only head 2 has a large sink; head 0's output must stay as without sinks.
  std::vector<float> sinks(4, -std::numeric_limits<float>::infinity());
  sinks[2] = 60.0f;
  std::vector<float> out = RunPagedAttention(problem, {.scale = 0.25f, .sinks = sinks.data()});
  std::vector<float> without = RunPagedAttention(problem, {.scale = 0.25f});
  double max_sunk = 0, max_free = 0;
  for (int64_t t = 0; t < problem.batch.num_tokens(); ++t) {
    for (int d = 0; d < kHeadDim; ++d) {
      max_sunk = std::max(max_sunk, double{std::abs(out[(t * 4 + 2) * kHeadDim + d])});
      max_free = std::max(max_free, double{std::abs(without[(t * 4 + 2) * kHeadDim + d])});
      EXPECT_EQ(out[(t * 4 + 0) * kHeadDim + d], without[(t * 4 + 0) * kHeadDim + d]);
    }
  }
  EXPECT_LT(max_sunk, 1e-15);
  EXPECT_GT(max_free, 0.1);
}

TEST(PagedAttentionTest, EveryKvCacheDtypeMatchesNaiveAttentionOnTheValuesItStores) {
  // The naive attention runs in double precision on what the dtype decodes to, so the tolerance
  // is f32's whatever the dtype.
  const std::vector<float> sinks = RandomSinks(8);
  for (KvCacheDtype dtype : kAllDtypes) {
    for (auto [num_heads, num_kv_heads] : {std::pair{4, 2}, {8, 2}, {3, 3}, {8, 1}}) {
      SCOPED_TRACE(testing::Message() << kernels::KvCacheDtypeName(dtype) << ", " << num_heads
                                      << " heads, " << num_kv_heads << " KV heads");
      const ProblemOptions problem = {.dtype = dtype};
      ExpectMatchesNaiveAttention(num_heads, num_kv_heads, {.scale = 0.25f}, problem);
      ExpectMatchesNaiveAttention(num_heads, num_kv_heads, {.scale = 0.25f, .sliding_window = 5},
                                  problem);
      ExpectMatchesNaiveAttention(num_heads, num_kv_heads, {.scale = 1.0f, .logit_softcap = 5.0f},
                                  problem);
      ExpectMatchesNaiveAttention(num_heads, num_kv_heads,
                                  {.scale = 0.25f, .sliding_window = 7, .sinks = sinks.data()},
                                  problem);
    }
  }
}

TEST(PagedAttentionTest, LongSequencesAndBlockSizesAroundTheKeyTile) {
  // Prompts of several query tiles (64 tokens) and key tiles, lengths not multiples of the block
  // size; blocks smaller than, equal to and larger than a key tile (32 and 48: several per block).
  for (int block_size : {1, 5, 16, 32, 48}) {
    for (KvCacheDtype dtype : {KvCacheDtype::kFloat32, KvCacheDtype::kInt8}) {
      SCOPED_TRACE(testing::Message()
                   << "block size " << block_size << ", " << kernels::KvCacheDtypeName(dtype));
      const ProblemOptions problem = {.dtype = dtype,
                                      .block_size = block_size,
                                      .seq_lens = {70, 45, 33, 1},
                                      .num_new = {70, 19, 1, 1}};
      ExpectMatchesNaiveAttention(8, 2, {.scale = 0.25f}, problem);
      ExpectMatchesNaiveAttention(8, 2, {.scale = 0.25f, .sliding_window = 20}, problem);
    }
  }
}

// Rows [first_token, first_token + num_tokens) of `a` and `b` ([tokens, num_heads, head_dim])
// are equal bit for bit.
void ExpectSameRows(const std::vector<float>& a, int64_t a_first, const std::vector<float>& b,
                    int64_t b_first, int64_t num_tokens, int num_heads, int head_dim = kHeadDim) {
  const int64_t row = num_heads * head_dim;
  const std::vector<float> a_rows(a.begin() + a_first * row,
                                  a.begin() + (a_first + num_tokens) * row);
  const std::vector<float> b_rows(b.begin() + b_first * row,
                                  b.begin() + (b_first + num_tokens) * row);
  EXPECT_EQ(a_rows, b_rows);
}

TEST(PagedAttentionTest, ATokenAloneEqualsTheSameTokenInsideAPrefillChunkBitForBit) {
  for (KvCacheDtype dtype : kAllDtypes) {
    for (int64_t window : {0, 9}) {
      SCOPED_TRACE(testing::Message() << kernels::KvCacheDtypeName(dtype) << ", window " << window);
      const AttentionOptions options = {.scale = 0.25f, .sliding_window = window};
      // Sequence 0 (40 tokens) whole, beside a decode; then only its token 37 (decode), alone
      // and beside a different batch.
      AttentionProblem prefill =
          MakeProblem(8, 2, {.dtype = dtype, .seq_lens = {40, 6}, .num_new = {40, 1}});
      AttentionProblem decode =
          MakeProblem(8, 2, {.dtype = dtype, .seq_lens = {38}, .num_new = {1}});
      AttentionProblem decode_in_batch =
          MakeProblem(8, 2, {.dtype = dtype, .seq_lens = {38, 20}, .num_new = {1, 20}});
      const std::vector<float> whole = RunPagedAttention(prefill, options);
      ExpectSameRows(whole, 37, RunPagedAttention(decode, options), 0, 1, 8);
      ExpectSameRows(whole, 37, RunPagedAttention(decode_in_batch, options), 0, 1, 8);
    }
  }
}

TEST(PagedAttentionTest, APromptInTwoChunksEqualsOneChunkBitForBit) {
  for (KvCacheDtype dtype : {KvCacheDtype::kFloat32, KvCacheDtype::kBFloat16}) {
    SCOPED_TRACE(kernels::KvCacheDtypeName(dtype));
    const AttentionOptions options = {.scale = 0.25f};
    AttentionProblem whole = MakeProblem(4, 2, {.dtype = dtype, .seq_lens = {50}, .num_new = {50}});
    const std::vector<float> one_chunk = RunPagedAttention(whole, options);
    // The first 23 tokens, then the other 27 with the first 23 cached.
    AttentionProblem first = MakeProblem(4, 2, {.dtype = dtype, .seq_lens = {23}, .num_new = {23}});
    AttentionProblem second =
        MakeProblem(4, 2, {.dtype = dtype, .seq_lens = {50}, .num_new = {27}});
    ExpectSameRows(one_chunk, 0, RunPagedAttention(first, options), 0, 23, 4);
    ExpectSameRows(one_chunk, 23, RunPagedAttention(second, options), 0, 27, 4);
  }
}

// Head dim 64 with bf16 KV: where the CPU has AMX BF16 this runs the tile path (q and softmax
// weights in bf16, one softmax step per span of 64 keys), elsewhere the vector path. Prompts of
// 150 tokens cross spans; blocks of 8, 16 and 48 keys put tiles in spans differently. A decode
// gives the bits of the same token inside a prefill (whose first key, with the window, lies in a
// tile before the decode's), and both stay within bf16 rounding of the
// naive attention (the values are normal, so |v| stays under 5).
TEST(PagedAttentionTest, Bf16KvAtHeadDim64GivesADecodeItsPrefillBitsAndMatchesNaiveAttention) {
  const std::vector<float> sinks = RandomSinks(8);
  for (int block_size : {8, 16, 48}) {
    for (const AttentionOptions& options :
         {AttentionOptions{.scale = 0.125f},
          AttentionOptions{.scale = 0.125f, .sliding_window = 37},
          AttentionOptions{.scale = 0.125f, .logit_softcap = 3.0f, .sinks = sinks.data()}}) {
      SCOPED_TRACE(testing::Message()
                   << "block size " << block_size << ", window " << options.sliding_window
                   << ", softcap " << options.logit_softcap);
      const ProblemOptions base = {
          .dtype = KvCacheDtype::kBFloat16, .block_size = block_size, .head_dim = 64};
      ProblemOptions prefill = base, decode = base;
      prefill.seq_lens = {150, 20};
      prefill.num_new = {150, 1};
      decode.seq_lens = {142};
      decode.num_new = {1};
      AttentionProblem whole = MakeProblem(8, 2, prefill);
      AttentionProblem alone = MakeProblem(8, 2, decode);
      const std::vector<float> out = RunPagedAttention(whole, options);
      ExpectSameRows(out, 141, RunPagedAttention(alone, options), 0, 1, 8, 64);
      const std::vector<float> expected = NaiveAttention(whole, options);
      for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], expected[i], 2e-2f) << i;
    }
  }
}

}  // namespace
}  // namespace vllm
