#include "sampling/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
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

}  // namespace
}  // namespace vllm
