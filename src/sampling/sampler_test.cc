#include "sampling/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "vllm/sampling_params.h"

namespace vllm {
namespace {

TEST(SamplerTest, GreedyPicksArgmaxLowestIndexOnTies) {
  Sampler sampler(SamplingOptions{.temperature = 0.0f});
  std::vector<float> logits = {0.1f, 3.0f, -1.0f, 3.0f};
  EXPECT_EQ(sampler.Sample(logits.data(), logits.size()), 1);
}

TEST(SamplerTest, SameSeedSameDraws) {
  std::vector<float> logits = {1.0f, 1.1f, 0.9f, 1.2f, 0.5f};
  SamplingOptions options{.temperature = 1.0f, .seed = 1234};
  Sampler a(options);
  Sampler b(options);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(a.Sample(logits.data(), logits.size()), b.Sample(logits.data(), logits.size()));
  }
}

TEST(SamplerTest, TopKOneIsGreedy) {
  Sampler sampler(SamplingOptions{.temperature = 5.0f, .top_k = 1, .seed = 7});
  std::vector<float> logits = {1.0f, 2.0f, 1.9f};
  for (int i = 0; i < 20; ++i) EXPECT_EQ(sampler.Sample(logits.data(), logits.size()), 1);
}

TEST(SamplerTest, TopPKeepsSmallestPrefixReachingMass) {
  // Probabilities ~ {0.5, 0.3, 0.2}: top_p = 0.6 keeps the first two only.
  std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  Sampler sampler(SamplingOptions{.temperature = 1.0f, .top_p = 0.6f, .seed = 3});
  std::map<int, int> counts;
  for (int i = 0; i < 2000; ++i) counts[sampler.Sample(logits.data(), logits.size())]++;
  EXPECT_EQ(counts[2], 0);
  EXPECT_GT(counts[0], counts[1]);
  EXPECT_GT(counts[1], 400);
}

TEST(SamplerTest, MinPDropsUnlikelyTokens) {
  std::vector<float> logits = {std::log(0.6f), std::log(0.35f), std::log(0.05f)};
  Sampler sampler(SamplingOptions{.temperature = 1.0f, .min_p = 0.2f, .seed = 5});
  for (int i = 0; i < 1000; ++i) EXPECT_NE(sampler.Sample(logits.data(), logits.size()), 2);
}

TEST(SamplerTest, FollowsTheDistribution) {
  std::vector<float> logits = {std::log(0.7f), std::log(0.2f), std::log(0.1f)};
  Sampler sampler(SamplingOptions{.temperature = 1.0f, .seed = 11});
  std::vector<int> counts(3);
  const int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) counts[sampler.Sample(logits.data(), logits.size())]++;
  EXPECT_NEAR(counts[0] / double(kDraws), 0.7, 0.02);
  EXPECT_NEAR(counts[1] / double(kDraws), 0.2, 0.02);
  EXPECT_NEAR(counts[2] / double(kDraws), 0.1, 0.02);
}

TEST(SamplerTest, ParamsValidateLikeVllm) {
  auto invalid = [](auto set) {
    SamplingParams params;
    set(params);
    return params.Validate();
  };
  EXPECT_EQ(invalid([](SamplingParams& p) { p.temperature = -1.0f; }),
            "temperature must be non-negative, got -1.0.");
  EXPECT_EQ(invalid([](SamplingParams& p) { p.top_p = 0.0f; }),
            "top_p must be in (0, 1], got 0.0.");
  EXPECT_EQ(invalid([](SamplingParams& p) { p.top_k = -2; }),
            "top_k must be 0 (disable), or at least 1, got -2.");
  EXPECT_EQ(invalid([](SamplingParams& p) { p.min_p = 1.5f; }),
            "min_p must be in [0, 1], got 1.5.");
  EXPECT_EQ(SamplingParams().Validate(), "");
}

// Every rule of kSamplingFields, and the checks across fields, give vLLM's message.
TEST(SamplingFieldsTest, EveryRuleGivesVllmsMessage) {
  auto invalid = [](auto set) {
    SamplingParams params;
    set(params);
    return params.Validate();
  };
  using P = SamplingParams&;
  EXPECT_EQ(invalid([](P p) { p.n = 0; }), "n must be at least 1, got 0.");
  EXPECT_EQ(invalid([](P p) { p.presence_penalty = 2.5f; }),
            "presence_penalty must be in [-2, 2], got 2.5.");
  EXPECT_EQ(invalid([](P p) { p.frequency_penalty = -3.0f; }),
            "frequency_penalty must be in [-2, 2], got -3.0.");
  EXPECT_EQ(invalid([](P p) { p.repetition_penalty = 0.0f; }),
            "repetition_penalty must be greater than zero, got 0.0.");
  EXPECT_EQ(invalid([](P p) { p.temperature = NAN; }),
            "temperature must be non-negative, got nan.");
  EXPECT_EQ(invalid([](P p) { p.max_tokens = 0; }), "max_tokens must be at least 1, got 0.");
  EXPECT_EQ(invalid([](P p) { p.min_tokens = -1; }),
            "min_tokens must be greater than or equal to 0, got -1.");
  EXPECT_EQ(invalid([](P p) { p.min_tokens = 17; }),
            "min_tokens must be less than or equal to max_tokens=16, got 17.");
  EXPECT_EQ(invalid([](P p) { p.logprobs = -2; }), "logprobs must be non-negative, got -2.");
  EXPECT_EQ(invalid([](P p) { p.prompt_logprobs = -2; }),
            "prompt_logprobs must be non-negative, got -2.");
  EXPECT_EQ(invalid([](P p) { p.truncate_prompt_tokens = 0; }),
            "truncate_prompt_tokens must be >= 1, got 0");  // vLLM's has no period
  EXPECT_EQ(invalid([](P p) { p.stop = {"a", ""}; }), "stop cannot contain an empty string.");
  EXPECT_EQ(invalid([](P p) { p.structured_outputs.emplace(); }),
            "You must use one kind of structured outputs constraint but none are specified.");
  // Unset optionals and the boundaries are valid.
  EXPECT_EQ(invalid([](P p) {
              p.max_tokens.reset();
              p.min_tokens = 1000;
              p.logprobs = -1;
              p.top_k = -1;
              p.top_p = 1.0f;
              p.min_p = 1.0f;
              p.presence_penalty = -2.0f;
            }),
            "");
}

// With several fields invalid, the first in vLLM's order is reported, the check across
// min_tokens and max_tokens right after min_tokens' own.
TEST(SamplingFieldsTest, FirstBrokenRuleInVllmsOrder) {
  SamplingParams params;
  params.min_tokens = 20;
  params.logprobs = -5;
  params.truncate_prompt_tokens = 0;
  params.stop = {""};
  EXPECT_EQ(params.Validate(), "min_tokens must be less than or equal to max_tokens=16, got 20.");
  params.min_tokens = 0;
  EXPECT_EQ(params.Validate(), "logprobs must be non-negative, got -5.");
  params.logprobs.reset();
  EXPECT_EQ(params.Validate(), "truncate_prompt_tokens must be >= 1, got 0");
  params.truncate_prompt_tokens.reset();
  EXPECT_EQ(params.Validate(), "stop cannot contain an empty string.");
  params.n = 0;
  EXPECT_EQ(params.Validate(), "n must be at least 1, got 0.");
}

// One row per field, each naming a different member.
TEST(SamplingFieldsTest, EachFieldHasOneRow) {
  std::vector<std::string> names;
  ForEachSamplingField([&](const auto& field) { names.push_back(field.name); });
  EXPECT_EQ(names.size(), std::tuple_size_v<decltype(kSamplingFields)>);
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  EXPECT_EQ(names.front(), "n");
  // Writing through each row's member changes what Validate reads for that name.
  SamplingParams params;
  ForEachSamplingField([&](const auto& field) {
    using Member = typename std::decay_t<decltype(field)>::Type;
    if constexpr (std::is_arithmetic_v<Member> && !std::is_same_v<Member, bool>) {
      params.*field.member = static_cast<Member>(-1000);
      if (field.rule) {
        EXPECT_NE(params.Validate().find(std::string(field.name) + " must be"), std::string::npos)
            << field.name;
      }
      params = SamplingParams();
    }
  });
}

}  // namespace
}  // namespace vllm
