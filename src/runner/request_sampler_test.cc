// RequestSampler::SampleWithDrafts: verification of draft tokens must emit exactly what
// token-by-token sampling emits, with logits processors and logprobs seeing the accepted drafts.
#include "runner/request_sampler.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace vllm {
namespace {

constexpr int64_t kVocabSize = 8;

// [num_rows, kVocabSize] logits, random but fixed.
std::vector<float> RandomRows(int num_rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> rows(num_rows * kVocabSize);
  for (float& value : rows) value = normal(rng);
  return rows;
}

SamplingInputs GreedyWithPenalties() {
  SamplingInputs inputs;
  inputs.params.temperature = 0.0f;
  inputs.params.presence_penalty = 1.5f;
  inputs.params.repetition_penalty = 1.3f;
  inputs.params.min_tokens = 3;
  inputs.params.logprobs = 2;
  inputs.eos_token_id = 0;
  return inputs;
}

// Token-by-token sampling over the same rows, each seeing the tokens emitted before it.
std::vector<SampledResult> SampleOneByOne(const std::vector<int32_t>& prompt,
                                          std::vector<int32_t> output, std::vector<float> rows,
                                          int num_rows) {
  RequestSampler sampler(GreedyWithPenalties());
  std::vector<SampledResult> results;
  for (int j = 0; j < num_rows; ++j) {
    results.push_back(sampler.Sample(prompt, output, rows.data() + j * kVocabSize, kVocabSize));
    output.push_back(results.back().token_id);
  }
  return results;
}

TEST(RequestSamplerTest, DraftsEqualToTheTokensSampledOneByOneAreAllAccepted) {
  const std::vector<int32_t> prompt = {1, 2, 3};
  const std::vector<int32_t> output = {4};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const std::vector<float> rows = RandomRows(4, seed);
    const std::vector<SampledResult> expected = SampleOneByOne(prompt, output, rows, 4);
    const std::vector<int32_t> drafts = {expected[0].token_id, expected[1].token_id,
                                         expected[2].token_id};
    std::vector<float> verified_rows = rows;
    RequestSampler sampler(GreedyWithPenalties());
    const std::vector<SampledResult> results =
        sampler.SampleWithDrafts(prompt, output, drafts, verified_rows.data(), kVocabSize);
    ASSERT_EQ(results.size(), 4u) << "seed " << seed;  // three accepted and the bonus token
    for (size_t j = 0; j < results.size(); ++j) {
      EXPECT_EQ(results[j].token_id, expected[j].token_id);
      ASSERT_TRUE(results[j].logprobs.has_value());
      EXPECT_EQ(results[j].logprobs->logprob, expected[j].logprobs->logprob);
      EXPECT_EQ(results[j].logprobs->top, expected[j].logprobs->top);
    }
  }
}

TEST(RequestSamplerTest, TheFirstWrongDraftIsReplacedAndEndsVerification) {
  const std::vector<int32_t> prompt = {1, 2, 3};
  const std::vector<int32_t> output = {4};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const std::vector<float> rows = RandomRows(4, seed);
    const std::vector<SampledResult> expected = SampleOneByOne(prompt, output, rows, 4);
    const int32_t wrong = (expected[1].token_id + 1) % kVocabSize;
    const std::vector<int32_t> drafts = {expected[0].token_id, wrong, expected[2].token_id};
    std::vector<float> verified_rows = rows;
    RequestSampler sampler(GreedyWithPenalties());
    const std::vector<SampledResult> results =
        sampler.SampleWithDrafts(prompt, output, drafts, verified_rows.data(), kVocabSize);
    ASSERT_EQ(results.size(), 2u);
    EXPECT_EQ(results[0].token_id, expected[0].token_id);
    EXPECT_EQ(results[1].token_id, expected[1].token_id);
  }
}

TEST(RequestSamplerTest, MinTokensRejectsAnEarlyEosDraft) {
  // EOS (0) leads every row, but min_tokens = 3 bans it while the output is shorter.
  std::vector<float> rows(3 * kVocabSize, 0.0f);
  for (int j = 0; j < 3; ++j) {
    rows[j * kVocabSize + 0] = 5.0f;
    rows[j * kVocabSize + 6] = 1.0f;
  }
  RequestSampler sampler(GreedyWithPenalties());
  const std::vector<int32_t> prompt = {1};
  const std::vector<int32_t> output = {5};
  const std::vector<int32_t> drafts = {0, 0};
  const std::vector<SampledResult> results =
      sampler.SampleWithDrafts(prompt, output, drafts, rows.data(), kVocabSize);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].token_id, 6);
}

}  // namespace
}  // namespace vllm
