#include "sampling/logits_processors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace vllm {
namespace {

TEST(LogitsProcessorsTest, RepetitionPenaltyDividesPositiveAndMultipliesNegative) {
  SamplingParams params;
  params.repetition_penalty = 2.0f;
  std::vector<float> logits = {4.0f, -4.0f, 4.0f};
  std::vector<int32_t> prompt = {0}, output = {1};
  ApplyLogitsProcessors(params, {prompt, output, {}, {}}, 3, logits.data());
  EXPECT_EQ(logits, (std::vector<float>{2.0f, -8.0f, 4.0f}));
}

TEST(LogitsProcessorsTest, FrequencyAndPresencePenaltiesCountOutputOnly) {
  SamplingParams params;
  params.frequency_penalty = 0.5f;
  params.presence_penalty = 1.0f;
  std::vector<float> logits = {0.0f, 0.0f, 0.0f};
  std::vector<int32_t> prompt = {2, 2}, output = {0, 0, 0};
  ApplyLogitsProcessors(params, {prompt, output, {}, {}}, 3, logits.data());
  EXPECT_EQ(logits, (std::vector<float>{-2.5f, 0.0f, 0.0f}));
}

TEST(LogitsProcessorsTest, BiasAllowedIdsBadWordsAndMinTokens) {
  SamplingParams params;
  params.logit_bias = {{1, 3.0f}, {99, 1.0f}};  // out-of-range ids are ignored
  params.allowed_token_ids = std::vector<int32_t>{1, 2, 3};
  params.min_tokens = 2;
  std::vector<float> logits(5, 0.0f);
  std::vector<int32_t> output = {7};
  // Bad word [7, 3]: the output ends with 7, so 3 is banned; [2] is always banned.
  ApplyLogitsProcessors(params, {{}, output, {{7, 3}, {2}}, {4}}, 5, logits.data());
  EXPECT_EQ(logits[1], 3.0f);
  EXPECT_TRUE(std::isinf(logits[0]));  // not allowed
  EXPECT_TRUE(std::isinf(logits[2]));  // bad word
  EXPECT_TRUE(std::isinf(logits[3]));  // bad word continuation
  EXPECT_TRUE(std::isinf(logits[4]));  // min_tokens stop id (and not allowed)
}

TEST(LogitsProcessorsTest, LogprobsAreLogSoftmaxWithRanks) {
  std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f};
  TokenLogprobs result = ComputeLogprobs(logits.data(), 4, 2, 2);
  double normalizer = std::log(std::exp(1.0) + 2 * std::exp(3.0) + std::exp(2.0));
  EXPECT_NEAR(result.logprob, 2.0 - normalizer, 1e-6);
  EXPECT_EQ(result.rank, 3);
  ASSERT_EQ(result.top.size(), 2u);
  EXPECT_EQ(result.top[0].first, 1);  // ties rank by id
  EXPECT_EQ(result.top[1].first, 3);
  EXPECT_NEAR(result.top[0].second, 3.0 - normalizer, 1e-6);
}

}  // namespace
}  // namespace vllm
