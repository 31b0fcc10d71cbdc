// --logprobs-mode on one fixed row of logits: what each of vLLM's four modes returns, with and
// without a grammar's mask (vLLM masks the logits before its sampler, so every mode sees it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runner/request_sampler.h"
#include "structured_output/token_vocabulary.h"

namespace vllm {
namespace {

using ::testing::FloatNear;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

constexpr int64_t kVocabSize = 4;
constexpr float kNegInf = -INFINITY;

// Token 1 was generated already: the presence penalty takes 0.5 off its logit (3 -> 2.5). Then a
// temperature of 2 halves them ({0.5, 1.25, 1, 0}) and top-k 2 keeps tokens 1 and 2.
SamplingInputs Inputs(LogprobsMode mode, float temperature) {
  SamplingInputs inputs;
  inputs.params.presence_penalty = 0.5f;
  inputs.params.temperature = temperature;
  inputs.params.top_k = 2;
  inputs.params.seed = 7;
  inputs.params.logprobs = 4;
  inputs.logprobs_mode = mode;
  return inputs;
}

TokenLogprobs Sampled(LogprobsMode mode, float temperature = 2.0f) {
  RequestSampler sampler(Inputs(mode, temperature));
  std::vector<float> row = {1.0f, 3.0f, 2.0f, 0.0f};
  const std::vector<int32_t> prompt = {0};
  const std::vector<int32_t> output = {1};
  const SampledResult result = sampler.Sample(prompt, output, row.data(), kVocabSize);
  EXPECT_TRUE(result.token_id == 1 || result.token_id == 2) << "top-k 2 keeps tokens 1 and 2";
  EXPECT_TRUE(result.logprobs.has_value());
  return result.logprobs.value_or(TokenLogprobs{});
}

float LogSumExp(std::vector<float> values) {
  double sum = 0.0;
  for (float value : values) sum += std::exp(double{value});
  return static_cast<float>(std::log(sum));
}

// The sampled token's value is its entry of `top`.
void ExpectSampledValueInTop(const TokenLogprobs& logprobs) {
  for (const auto& [id, value] : logprobs.top) {
    if (id == logprobs.token_id) {
      EXPECT_FLOAT_EQ(value, logprobs.logprob);
    }
  }
}

TEST(LogprobsModeTest, RawLogitsAreTheModelsLogitsUntouched) {
  const TokenLogprobs logprobs = Sampled(LogprobsMode::kRawLogits);
  EXPECT_THAT(logprobs.top,
              ::testing::ElementsAre(Pair(1, 3.0f), Pair(2, 2.0f), Pair(0, 1.0f), Pair(3, 0.0f)));
  ExpectSampledValueInTop(logprobs);
}

TEST(LogprobsModeTest, RawLogprobsAreTheLogSoftmaxOfTheModelsLogits) {
  const TokenLogprobs logprobs = Sampled(LogprobsMode::kRawLogprobs);
  const float normalizer = LogSumExp({1.0f, 3.0f, 2.0f, 0.0f});
  ASSERT_EQ(logprobs.top.size(), 4u);
  EXPECT_EQ(logprobs.top[0].first, 1);
  EXPECT_NEAR(logprobs.top[0].second, 3.0f - normalizer, 1e-5f);
  EXPECT_EQ(logprobs.top[3].first, 3);
  EXPECT_NEAR(logprobs.top[3].second, 0.0f - normalizer, 1e-5f);
  ExpectSampledValueInTop(logprobs);
}

TEST(LogprobsModeTest, ProcessedLogitsArePenalizedScaledAndFiltered) {
  const TokenLogprobs logprobs = Sampled(LogprobsMode::kProcessedLogits);
  EXPECT_THAT(logprobs.top, ::testing::ElementsAre(Pair(1, 1.25f), Pair(2, 1.0f), Pair(0, kNegInf),
                                                   Pair(3, kNegInf)));
  EXPECT_EQ(logprobs.rank, logprobs.token_id == 1 ? 1 : 2);
  ExpectSampledValueInTop(logprobs);
}

TEST(LogprobsModeTest, ProcessedLogprobsAreTheDistributionSampledFrom) {
  const TokenLogprobs logprobs = Sampled(LogprobsMode::kProcessedLogprobs);
  const float normalizer = LogSumExp({1.25f, 1.0f});
  ASSERT_EQ(logprobs.top.size(), 4u);
  EXPECT_NEAR(logprobs.top[0].second, 1.25f - normalizer, 1e-5f);
  EXPECT_NEAR(logprobs.top[1].second, 1.0f - normalizer, 1e-5f);
  EXPECT_EQ(logprobs.top[2].second, kNegInf);
  ExpectSampledValueInTop(logprobs);
}

TEST(LogprobsModeTest, GreedyProcessedLogitsArePenalizedOnly) {
  // As vLLM's greedy path: no temperature and no top-k / top-p filtering.
  const TokenLogprobs logprobs = Sampled(LogprobsMode::kProcessedLogits, /*temperature=*/0.0f);
  EXPECT_EQ(logprobs.token_id, 1);
  EXPECT_THAT(logprobs.top,
              ::testing::ElementsAre(Pair(1, 2.5f), Pair(2, 2.0f), Pair(0, 1.0f), Pair(3, 0.0f)));
}

// The same row under a grammar that allows only tokens 2 ("c") and 3 ("d"): the penalized
// token 1 and token 0 are masked to -inf before any mode reads the logits.
TokenLogprobs SampledUnderGrammar(LogprobsMode mode) {
  SamplingInputs inputs = Inputs(mode, /*temperature=*/2.0f);
  auto vocabulary = IndexVocabulary(TokenVocabulary{.token_bytes = {"a", "b", "c", "d"}});
  auto grammar = CompiledGrammar::Compile("root ::= [cd]+", vocabulary);
  EXPECT_TRUE(grammar.ok());
  if (!grammar.ok()) return {};
  inputs.grammar = *grammar;
  RequestSampler sampler(std::move(inputs));
  std::vector<float> row = {1.0f, 3.0f, 2.0f, 0.0f};
  const std::vector<int32_t> prompt = {0};
  const std::vector<int32_t> output = {1};
  const SampledResult result = sampler.Sample(prompt, output, row.data(), kVocabSize);
  EXPECT_TRUE(result.token_id == 2 || result.token_id == 3) << "the grammar allows 2 and 3";
  EXPECT_TRUE(result.logprobs.has_value());
  TokenLogprobs logprobs = result.logprobs.value_or(TokenLogprobs{});
  ExpectSampledValueInTop(logprobs);
  if (!logprobs.top.empty()) {
    EXPECT_EQ(logprobs.top[0].first, 2);
  }
  return logprobs;
}

// The top entries under that grammar: tokens 2 and 3 matching `c` and `d`, the masked 0 and 1 at
// -inf.
template <typename MatchC, typename MatchD>
auto AllowedAndMasked(MatchC c, MatchD d) {
  return UnorderedElementsAre(Pair(2, c), Pair(3, d), Pair(0, kNegInf), Pair(1, kNegInf));
}

// The same with the allowed tokens' logits c and d normalized over the two of them.
auto AllowedLogprobsAndMasked(float c, float d) {
  const float normalizer = LogSumExp({c, d});
  return AllowedAndMasked(FloatNear(c - normalizer, 1e-5f), FloatNear(d - normalizer, 1e-5f));
}

TEST(LogprobsModeTest, RawLogprobsRenormalizeOverTheTokensTheGrammarAllows) {
  EXPECT_THAT(SampledUnderGrammar(LogprobsMode::kRawLogprobs).top,
              AllowedLogprobsAndMasked(2.0f, 0.0f));
}

TEST(LogprobsModeTest, RawLogitsOfTheTokensTheGrammarForbidsAreMinusInfinity) {
  EXPECT_THAT(SampledUnderGrammar(LogprobsMode::kRawLogits).top, AllowedAndMasked(2.0f, 0.0f));
}

TEST(LogprobsModeTest, ProcessedModesSeeTheGrammarsMaskToo) {
  // Temperature 2 halves the allowed logits ({1, 0}); top-k 2 keeps both.
  EXPECT_THAT(SampledUnderGrammar(LogprobsMode::kProcessedLogits).top,
              AllowedAndMasked(1.0f, 0.0f));
  EXPECT_THAT(SampledUnderGrammar(LogprobsMode::kProcessedLogprobs).top,
              AllowedLogprobsAndMasked(1.0f, 0.0f));
}

TEST(LogprobsModeTest, ParsesVllmsNamesOnly) {
  EXPECT_EQ(ParseLogprobsMode("raw_logprobs"), LogprobsMode::kRawLogprobs);
  EXPECT_EQ(ParseLogprobsMode("raw_logits"), LogprobsMode::kRawLogits);
  EXPECT_EQ(ParseLogprobsMode("processed_logprobs"), LogprobsMode::kProcessedLogprobs);
  EXPECT_EQ(ParseLogprobsMode("processed_logits"), LogprobsMode::kProcessedLogits);
  EXPECT_FALSE(ParseLogprobsMode("logits").has_value());
}

}  // namespace
}  // namespace vllm
