#include "cli/speculative_config_flag.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vllm {
namespace {

using ::testing::HasSubstr;

TEST(SpeculativeConfigFlagTest, ReadsVllmKeys) {
  auto config = ParseSpeculativeConfig(
      R"({"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 3,
          "prompt_lookup_min": null})");
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->method, "ngram");
  EXPECT_EQ(config->num_speculative_tokens, 4);
  EXPECT_EQ(config->prompt_lookup_max, 3);
  EXPECT_FALSE(config->prompt_lookup_min.has_value());
}

TEST(SpeculativeConfigFlagTest, RefusesBadJsonKeysAndTypes) {
  EXPECT_THAT(ParseSpeculativeConfig("{method: ngram}").error(), HasSubstr("JSON object"));
  EXPECT_THAT(ParseSpeculativeConfig("[1]").error(), HasSubstr("JSON object"));
  EXPECT_THAT(ParseSpeculativeConfig(R"({"num_speculative_token": 4})").error(),
              HasSubstr("unknown key \"num_speculative_token\""));
  EXPECT_THAT(ParseSpeculativeConfig(R"({"num_speculative_tokens": "4"})").error(),
              HasSubstr("\"num_speculative_tokens\" must be an integer"));
  EXPECT_THAT(ParseSpeculativeConfig(R"({"num_speculative_tokens": 1e12})").error(),
              HasSubstr("must be an integer"));
  EXPECT_THAT(ParseSpeculativeConfig(R"({"method": 3})").error(),
              HasSubstr("\"method\" must be a string"));
}

}  // namespace
}  // namespace vllm
