#include "cli/guided_decoding_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vllm {
namespace {

using ::testing::HasSubstr;

// Parses `args` (after the command name) into the flags, as `serve` would.
GuidedDecodingFlags Parsed(std::vector<std::string> args) {
  CLI::App serve;
  GuidedDecodingFlags flags;
  AddGuidedDecodingFlags(serve, flags);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  serve.parse(args);
  return flags;
}

TEST(GuidedDecodingFlagsTest, GivenFlagsReplaceTheStructuredOutputsConfigKeys) {
  auto config = server::ParseStructuredOutputsConfig(
      R"({"disable_any_whitespace": true, "disable_additional_properties": false})");
  ASSERT_TRUE(config.ok()) << config.error();
  const GuidedDecodingFlags flags = Parsed({"--guided-decoding-backend", "guidance",
                                            "--no-guided-decoding-disable-any-whitespace",
                                            "--guided-decoding-disable-additional-properties"});
  ASSERT_TRUE(ApplyGuidedDecodingFlags(flags, &*config).ok());
  EXPECT_FALSE(config->disable_any_whitespace);
  EXPECT_TRUE(config->disable_additional_properties);
}

TEST(GuidedDecodingFlagsTest, FlagsNotGivenLeaveTheConfig) {
  server::StructuredOutputsConfig config;
  config.disable_any_whitespace = true;
  ASSERT_TRUE(
      ApplyGuidedDecodingFlags(Parsed({"--guided-decoding-disable-fallback"}), &config).ok());
  EXPECT_TRUE(config.disable_any_whitespace);
  EXPECT_FALSE(config.disable_additional_properties);
}

TEST(GuidedDecodingFlagsTest, TakesEveryVllmBackendAndRefusesOthersByName) {
  for (const char* backend : {"auto", "xgrammar", "guidance", "outlines", "lm-format-enforcer"}) {
    server::StructuredOutputsConfig config;
    EXPECT_TRUE(
        ApplyGuidedDecodingFlags(Parsed({"--guided-decoding-backend", backend}), &config).ok())
        << backend;
  }
  server::StructuredOutputsConfig config;
  EXPECT_THAT(
      ApplyGuidedDecodingFlags(Parsed({"--guided-decoding-backend", "llguidance2"}), &config)
          .message(),
      HasSubstr("--guided-decoding-backend llguidance2: not one of vLLM's backends"));
}

TEST(GuidedDecodingFlagsTest, RefusesAnyWhitespaceOffBesideAWhitespacePattern) {
  server::StructuredOutputsConfig config;
  config.whitespace_pattern = "[ ]*";
  EXPECT_THAT(
      ApplyGuidedDecodingFlags(Parsed({"--guided-decoding-disable-any-whitespace"}), &config)
          .message(),
      HasSubstr("whitespace_pattern"));
}

}  // namespace
}  // namespace vllm
