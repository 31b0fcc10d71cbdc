#include "model/layers/rope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

namespace vllm {
namespace {

ModelConfig RopeConfig(int64_t head_dim, float theta) {
  ModelConfig config;
  config.head_dim = head_dim;
  config.rope_dim = head_dim;
  config.rope_theta = theta;
  config.rope_style = RopeStyle::kNeox;
  return config;
}

// The frequency index (fractional) at which pair i's frequency theta^(-2i/d) turns `rotations`
// times over `context` positions: context · theta^(-2i/d) = 2π · rotations, solved for i.
double IndexTurning(double rotations, int64_t dim, double theta, int64_t context) {
  return 0.5 * static_cast<double>(dim) *
         std::log2(static_cast<double>(context) / (2.0 * std::numbers::pi * rotations)) /
         std::log2(theta);
}

// transformers' YaRN inverse frequencies written out per index: pairs at or below `low` keep
// theta^(-2i/d), pairs at or above `high` take it divided by factor, and the ones between blend
// the two linearly in i.
std::vector<double> ExpectedYarnInvFreq(int64_t dim, double theta, double factor, double low,
                                        double high) {
  std::vector<double> inv_freq;
  for (int64_t i = 0; i < dim / 2; ++i) {
    const double base_freq = std::exp(-2.0 * static_cast<double>(i) / dim * std::log(theta));
    double interpolated_share = 0.0;
    if (i >= high) {
      interpolated_share = 1.0;
    } else if (i > low) {
      interpolated_share = (i - low) / (high - low);
    }
    inv_freq.push_back((1.0 - interpolated_share) * base_freq +
                       interpolated_share * base_freq / factor);
  }
  return inv_freq;
}

void ExpectInvFreqEq(const Rope& rope, const std::vector<double>& expected) {
  ASSERT_EQ(rope.inv_freq().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_FLOAT_EQ(rope.inv_freq()[i], static_cast<float>(expected[i])) << "index " << i;
  }
}

// gpt-oss: head_dim 64, rope_theta 150000, rope_scaling {factor 32, original 4096, beta_fast 32,
// beta_slow 1, truncate false}.
TEST(RopeTest, YarnMatchesTransformersForGptOss) {
  const ModelConfig config = RopeConfig(64, 150000.0f);
  const Rope rope(config, YarnScaling{.factor = 32.0f,
                                      .original_context_length = 4096,
                                      .beta_fast = 32.0f,
                                      .beta_slow = 1.0f,
                                      .truncate = false});
  // Untruncated correction range, as Python's math computes it.
  const double low = IndexTurning(32.0, 64, 150000.0, 4096);
  const double high = IndexTurning(1.0, 64, 150000.0, 4096);
  EXPECT_NEAR(low, 8.092779115512402, 1e-12);
  EXPECT_NEAR(high, 17.39802450158856, 1e-12);
  ExpectInvFreqEq(rope, ExpectedYarnInvFreq(64, 150000.0, 32.0, low, high));
  // The fastest pair is untouched, the slowest fully interpolated.
  EXPECT_FLOAT_EQ(rope.inv_freq()[0], 1.0f);
  EXPECT_FLOAT_EQ(rope.inv_freq()[31], static_cast<float>(std::pow(150000.0, -62.0 / 64) / 32));
  // 0.1 · ln(32) + 1.
  EXPECT_FLOAT_EQ(rope.attn_factor(), 1.3465735902799727f);
}

TEST(RopeTest, YarnTruncateFloorsAndCeilsTheCorrectionRange) {
  // Qwen3-style: head_dim 128, rope_theta 1e6, factor 4 over 32768, truncate left at its default.
  const ModelConfig config = RopeConfig(128, 1e6f);
  const YarnScaling yarn{.factor = 4.0f, .original_context_length = 32768};
  const Rope rope(config, yarn);
  // Untruncated: [23.596, 39.651]; truncated: [23, 40].
  EXPECT_NEAR(IndexTurning(32.0, 128, 1e6, 32768), 23.5959476083381, 1e-12);
  EXPECT_NEAR(IndexTurning(1.0, 128, 1e6, 32768), 39.6508807104171, 1e-12);
  ExpectInvFreqEq(rope, ExpectedYarnInvFreq(128, 1e6, 4.0, 23.0, 40.0));
  EXPECT_FLOAT_EQ(rope.attn_factor(), static_cast<float>(0.1 * std::log(4.0) + 1.0));

  // gpt-oss's parameters with truncation: [8.09, 17.40] becomes [8, 18], which moves the ramp.
  const ModelConfig gpt_oss = RopeConfig(64, 150000.0f);
  const Rope truncated(gpt_oss, YarnScaling{.factor = 32.0f, .original_context_length = 4096});
  ExpectInvFreqEq(truncated, ExpectedYarnInvFreq(64, 150000.0, 32.0, 8.0, 18.0));
  const Rope untruncated(
      gpt_oss, YarnScaling{.factor = 32.0f, .original_context_length = 4096, .truncate = false});
  EXPECT_NE(truncated.inv_freq()[12], untruncated.inv_freq()[12]);
}

TEST(RopeTest, YarnEmptyCorrectionRangeKeepsOnlyItsStart) {
  // An original context of 6 < 2π positions puts both correction dims at or below 0, so the range
  // collapses to [0, 0]: transformers widens it to [0, 0.001], which keeps pair 0's frequency and
  // interpolates every other one.
  const ModelConfig config = RopeConfig(64, 10000.0f);
  const Rope rope(config, YarnScaling{.factor = 8.0f, .original_context_length = 6});
  ASSERT_EQ(rope.inv_freq().size(), 32u);
  EXPECT_FLOAT_EQ(rope.inv_freq()[0], 1.0f);
  for (int64_t i = 1; i < 32; ++i) {
    EXPECT_FLOAT_EQ(rope.inv_freq()[i], static_cast<float>(std::pow(10000.0, -i / 32.0) / 8)) << i;
  }
}

TEST(RopeTest, YarnAttentionFactorFromMscaleOrGivenTimesConfigFactor) {
  ModelConfig config = RopeConfig(64, 10000.0f);
  // DeepSeek-style: both mscales set → get_mscale(40, 1) / get_mscale(40, 0.707).
  const Rope deepseek(config, YarnScaling{.factor = 40.0f,
                                          .original_context_length = 4096,
                                          .mscale = 1.0f,
                                          .mscale_all_dim = 0.707f});
  EXPECT_FLOAT_EQ(deepseek.attn_factor(), static_cast<float>((0.1 * std::log(40.0) + 1.0) /
                                                             (0.0707 * std::log(40.0) + 1.0)));
  // Only one of them set: the plain 0.1 · ln(factor) + 1.
  const Rope one_mscale(
      config, YarnScaling{.factor = 40.0f, .original_context_length = 4096, .mscale = 0.707f});
  EXPECT_FLOAT_EQ(one_mscale.attn_factor(), static_cast<float>(0.1 * std::log(40.0) + 1.0));
  // A factor of at most 1 derives 1.
  const Rope no_extension(config, YarnScaling{.factor = 1.0f, .original_context_length = 4096});
  EXPECT_FLOAT_EQ(no_extension.attn_factor(), 1.0f);
  // A given attention factor wins, and config.rope_attn_factor multiplies whichever applies.
  config.rope_attn_factor = 0.5f;
  const Rope given(config, YarnScaling{.factor = 40.0f,
                                       .original_context_length = 4096,
                                       .mscale = 1.0f,
                                       .mscale_all_dim = 0.707f,
                                       .attention_factor = 1.25f});
  EXPECT_FLOAT_EQ(given.attn_factor(), 0.625f);
}

TEST(RopeTest, YarnScalesBothCosAndSin) {
  const ModelConfig config = RopeConfig(64, 150000.0f);
  const Rope rope(config,
                  YarnScaling{.factor = 32.0f, .original_context_length = 4096, .truncate = false});
  const int64_t half = 32;
  // Head 0 holds e_first of every NeoX pair (i, i + half), head 1 e_second.
  std::vector<float> x(2 * 64, 0.0f);
  for (int64_t i = 0; i < half; ++i) {
    x[i] = 1.0f;
    x[64 + half + i] = 1.0f;
  }
  const int32_t position = 37;
  rope.Apply(&position, 1, 2, x.data());
  const double scale = 0.1 * std::log(32.0) + 1.0;
  for (int64_t i = 0; i < half; ++i) {
    const double angle = position * double{rope.inv_freq()[i]};
    // R(angle) · e_first = (cos, sin), R(angle) · e_second = (-sin, cos), each times the factor.
    EXPECT_NEAR(x[i], scale * std::cos(angle), 1e-5) << i;
    EXPECT_NEAR(x[half + i], scale * std::sin(angle), 1e-5) << i;
    EXPECT_NEAR(x[64 + i], -scale * std::sin(angle), 1e-5) << i;
    EXPECT_NEAR(x[64 + half + i], scale * std::cos(angle), 1e-5) << i;
  }
}

}  // namespace
}  // namespace vllm
