// Every pre-tokenizer name compiles under PCRE2 and splits text into pieces that cover it.
#include "tokenizer/pre_tokenizer_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tokenizer/regex_splitter.h"

namespace vllm {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> SplitWith(const std::string& pre, const std::string& text) {
  auto config = FindPreTokenizerConfig(pre);
  EXPECT_TRUE(config.has_value()) << pre;
  if (!config) return {};
  auto splitter = RegexSplitter::Create(config->patterns);
  EXPECT_TRUE(splitter.ok()) << pre << ": " << splitter.error();
  if (!splitter.ok()) return {};
  std::vector<std::string> pieces;
  for (std::string_view piece : splitter->Split(text)) pieces.emplace_back(piece);
  return pieces;
}

TEST(PreTokenizerConfigTest, EveryKnownNameCompilesAndCoversTheText) {
  const std::string text =
      "Hello World! It's 12345 héllo 東京\n\n  tabs\there 🦙 <sentinel:3>";
  for (const std::string& pre : KnownPreTokenizerNames()) {
    std::string joined;
    for (const std::string& piece : SplitWith(pre, text)) joined += piece;
    EXPECT_EQ(joined, text) << pre;
  }
}

TEST(PreTokenizerConfigTest, DigitGroupingFollowsThePattern) {
  EXPECT_THAT(SplitWith("llama-bpe", "12345"), ElementsAre("123", "45"));
  EXPECT_THAT(SplitWith("qwen2", "123"), ElementsAre("1", "2", "3"));
  EXPECT_THAT(SplitWith("gpt-2", "abc 12345"), ElementsAre("abc", " 12345"));
}

TEST(PreTokenizerConfigTest, UnknownNamesAreNotFound) {
  EXPECT_FALSE(FindPreTokenizerConfig("klingon").has_value());
  EXPECT_TRUE(FindPreTokenizerConfig("").has_value());  // no tokenizer.ggml.pre: the default
}

TEST(PreTokenizerConfigTest, LlamaThreeIgnoresMergesAndAddsBos) {
  auto config = FindPreTokenizerConfig("llama-bpe");
  ASSERT_TRUE(config.has_value());
  EXPECT_TRUE(config->ignore_merges);
  EXPECT_TRUE(config->add_bos_by_default);
  EXPECT_FALSE(FindPreTokenizerConfig("gpt-2")->ignore_merges);
}

}  // namespace
}  // namespace vllm
