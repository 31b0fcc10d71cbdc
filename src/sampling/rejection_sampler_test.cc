// Sampler::SampleWithDraft, vLLM's rejection sampler for one-hot (n-gram) drafts: greedy accepts
// exactly the argmax; random sampling emits tokens distributed as the target distribution
// whatever the draft, and accepts a draft with probability p(draft).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sampling/sampler.h"

namespace vllm {
namespace {

std::vector<float> LogitsOf(const std::vector<double>& probabilities) {
  std::vector<float> logits;
  for (double p : probabilities) logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

// Frequencies of SampleWithDraft's outputs over `num_draws` draws.
std::vector<double> OutputFrequencies(Sampler& sampler, const std::vector<float>& logits,
                                      int32_t draft, int num_draws) {
  std::vector<double> frequencies(logits.size());
  for (int i = 0; i < num_draws; ++i) {
    frequencies[sampler.SampleWithDraft(logits.data(), logits.size(), draft)] += 1.0 / num_draws;
  }
  return frequencies;
}

TEST(RejectionSamplerTest, GreedyAcceptsOnlyTheArgmax) {
  Sampler sampler(SamplingOptions{.temperature = 0.0f});
  const std::vector<float> logits = {0.1f, 2.5f, 2.4f, -1.0f};
  EXPECT_EQ(sampler.SampleWithDraft(logits.data(), logits.size(), 1), 1);  // accepted
  EXPECT_EQ(sampler.SampleWithDraft(logits.data(), logits.size(), 2), 1);  // corrected
  EXPECT_EQ(sampler.SampleWithDraft(logits.data(), logits.size(), 0), 1);
}

// Statistical: 40000 draws put each frequency within 0.01 of its probability (4 standard
// deviations or more); a sampler that ignored the rejection rule would be off by 0.1 or more.
TEST(RejectionSamplerTest, OutputFollowsTheTargetDistributionWhateverTheDraft) {
  const std::vector<double> target = {0.5, 0.3, 0.15, 0.05};
  const std::vector<float> logits = LogitsOf(target);
  const int kDraws = 40000;
  for (int32_t draft = 0; draft < 4; ++draft) {
    Sampler sampler(SamplingOptions{.temperature = 1.0f, .seed = 17u + draft});
    const std::vector<double> frequencies = OutputFrequencies(sampler, logits, draft, kDraws);
    for (size_t token = 0; token < target.size(); ++token) {
      EXPECT_NEAR(frequencies[token], target[token], 0.01) << "draft " << draft;
    }
  }
}

TEST(RejectionSamplerTest, FollowsTheFilteredDistribution) {
  // top_k = 2 keeps {0: 0.5, 1: 0.3} → {0.625, 0.375}; a draft outside it is never accepted.
  const std::vector<float> logits = LogitsOf({0.5, 0.3, 0.15, 0.05});
  Sampler sampler(SamplingOptions{.temperature = 1.0f, .top_k = 2, .seed = 3});
  const std::vector<double> frequencies = OutputFrequencies(sampler, logits, 2, 40000);
  EXPECT_NEAR(frequencies[0], 0.625, 0.01);
  EXPECT_NEAR(frequencies[1], 0.375, 0.01);
  EXPECT_EQ(frequencies[2], 0.0);
  EXPECT_EQ(frequencies[3], 0.0);
}

TEST(RejectionSamplerTest, TemperatureShapesTheTarget) {
  // Temperature 0.5 squares the probabilities: {0.64, 0.16, 0.16, 0.04} / 1.0.
  const std::vector<float> logits = LogitsOf({0.8, 0.4, 0.4, 0.2});
  Sampler sampler(SamplingOptions{.temperature = 0.5f, .seed = 9});
  const std::vector<double> frequencies = OutputFrequencies(sampler, logits, 1, 40000);
  EXPECT_NEAR(frequencies[0], 0.64, 0.01);
  EXPECT_NEAR(frequencies[1], 0.16, 0.01);
  EXPECT_NEAR(frequencies[2], 0.16, 0.01);
  EXPECT_NEAR(frequencies[3], 0.04, 0.01);
}

TEST(RejectionSamplerTest, ACertainDraftIsAlwaysAccepted) {
  const std::vector<float> logits = {0.0f, 100.0f, 0.0f};
  Sampler sampler(SamplingOptions{.temperature = 1.0f, .seed = 1});
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(sampler.SampleWithDraft(logits.data(), 3, 1), 1);
}

TEST(RejectionSamplerTest, SameSeedSameDecisions) {
  const std::vector<float> logits = LogitsOf({0.4, 0.35, 0.25});
  SamplingOptions options{.temperature = 1.0f, .seed = 99};
  Sampler a(options);
  Sampler b(options);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(a.SampleWithDraft(logits.data(), 3, i % 3),
              b.SampleWithDraft(logits.data(), 3, i % 3));
  }
}

}  // namespace
}  // namespace vllm
