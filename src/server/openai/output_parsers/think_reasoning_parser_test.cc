// Tests of the <think> reasoning parsers (deepseek_r1, qwen3) and the reasoning parser registry.
#include <gtest/gtest.h>

#include "server/openai/output_parsers/reasoning_parser.h"
#include "server/openai/output_parsers/stream_test_util.h"

namespace vllm::server {
namespace {

using testing::ReasoningStreamMatchesParse;

ReasoningParseResult Parse(std::string_view name, std::string_view output,
                           ReasoningParserOptions options = {}) {
  return CreateReasoningParser(name, options)->Parse(output);
}

TEST(ThinkReasoningParserTest, SplitsAtTheEndTag) {
  for (std::string_view name : {"deepseek_r1", "qwen3"}) {
    ReasoningParseResult result = Parse(name, "Let me think.\n</think>\n\nParis.");
    EXPECT_EQ(result.reasoning_content, "Let me think.\n");
    EXPECT_EQ(result.content, "\n\nParis.");
    result = Parse(name, "\n<think>\nHmm.</think>Paris.");  // a leading <think> is dropped
    EXPECT_EQ(result.reasoning_content, "\nHmm.");
    EXPECT_EQ(result.content, "Paris.");
    result = Parse(name, "</think>Paris.");
    EXPECT_EQ(result.reasoning_content, "");
    EXPECT_EQ(result.content, "Paris.");
    result = Parse(name, "<think>Done.</think>");
    EXPECT_EQ(result.reasoning_content, "Done.");
    EXPECT_EQ(result.content, std::nullopt);
  }
}

TEST(ThinkReasoningParserTest, WithoutEndTagEverythingIsReasoning) {
  for (std::string_view name : {"deepseek_r1", "qwen3"}) {
    const ReasoningParseResult result = Parse(name, "<think>Still thinking");
    EXPECT_EQ(result.reasoning_content, "Still thinking");
    EXPECT_EQ(result.content, std::nullopt);
    EXPECT_EQ(Parse(name, "No tags at all.").reasoning_content, "No tags at all.");
  }
}

TEST(ThinkReasoningParserTest, OnlyALeadingThinkTagIsDropped) {
  const ReasoningParseResult result = Parse("qwen3", "a<think>b</think>c");
  EXPECT_EQ(result.reasoning_content, "a<think>b");
  EXPECT_EQ(result.content, "c");
}

TEST(ThinkReasoningParserTest, Qwen3WithThinkingDisabledIsAllContent) {
  const ReasoningParserOptions off{.thinking_enabled = false};
  const ReasoningParseResult result = Parse("qwen3", "<think>x</think>Paris.", off);
  EXPECT_EQ(result.reasoning_content, std::nullopt);
  EXPECT_EQ(result.content, "<think>x</think>Paris.");
  EXPECT_EQ(CreateReasoningParser("qwen3", off)->reasoning_end(), "");
  EXPECT_EQ(CreateReasoningParser("qwen3")->reasoning_end(), "</think>");
  // vLLM's DeepSeek R1 parser has no switch.
  EXPECT_EQ(Parse("deepseek_r1", "a</think>b", off).reasoning_content, "a");
  EXPECT_EQ(CreateReasoningParser("deepseek_r1", off)->reasoning_end(), "</think>");
}

TEST(ThinkReasoningParserTest, StreamingMatchesParseAtEverySplit) {
  for (const char* output : {"Let me think.</think>\n\nParis.", "  <think>Hmm </thin </think>x",
                             "<think>Still thinking </th", "</think>", "<thi", " \n ", "",
                             "a<think>b</think>c</think>d", "<think><think></think>"}) {
    for (const char* name : {"deepseek_r1", "qwen3"}) {
      EXPECT_TRUE(ReasoningStreamMatchesParse(name, {}, output)) << output;
    }
    EXPECT_TRUE(ReasoningStreamMatchesParse("qwen3", {.thinking_enabled = false}, output));
  }
}

TEST(ThinkReasoningParserTest, StreamingHoldsBackOnlyAPossibleTag) {
  auto parser = CreateReasoningParser("deepseek_r1");
  DeltaMessage delta = parser->ParseDelta("<thi");
  EXPECT_TRUE(delta.empty());
  delta = parser->ParseDelta("nk>abc</th");
  EXPECT_EQ(delta.reasoning_content, "abc");
  delta = parser->ParseDelta("ink>Par");
  EXPECT_EQ(delta.reasoning_content, "");
  EXPECT_EQ(delta.content, "Par");
  EXPECT_TRUE(parser->Finish().empty());
}

TEST(ReasoningParserRegistryTest, KnowsItsNames) {
  EXPECT_EQ(ReasoningParserNames(), (std::vector<std::string>{"deepseek_r1", "openai", "qwen3"}));
  for (const std::string& name : ReasoningParserNames()) {
    EXPECT_NE(CreateReasoningParser(name), nullptr) << name;
  }
  EXPECT_EQ(CreateReasoningParser("granite"), nullptr);
}

TEST(ToolParserRegistryTest, KnowsItsNames) {
  EXPECT_EQ(ToolParserNames(),
            (std::vector<std::string>{"hermes", "llama3_json", "mistral", "openai"}));
  for (const std::string& name : ToolParserNames()) {
    EXPECT_NE(CreateToolParser(name), nullptr) << name;
    EXPECT_TRUE(ToolParserInfoOf(name).has_value()) << name;
  }
  EXPECT_TRUE(ToolParserInfoOf("hermes")->needs_special_tokens);
  EXPECT_FALSE(ToolParserInfoOf("llama3_json")->needs_special_tokens);
  EXPECT_EQ(CreateToolParser("pythonic"), nullptr);
  EXPECT_EQ(ToolParserInfoOf("pythonic"), std::nullopt);
}

}  // namespace
}  // namespace vllm::server
