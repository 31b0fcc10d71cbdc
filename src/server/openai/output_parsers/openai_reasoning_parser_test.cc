// Tests of the openai (gpt-oss harmony) reasoning parser, alone and followed by the openai tool
// parser as the chat handler runs them.
#include <gtest/gtest.h>

#include "server/openai/output_parsers/reasoning_parser.h"
#include "server/openai/output_parsers/stream_test_util.h"
#include "server/openai/output_parsers/tool_parser.h"

namespace vllm::server {
namespace {

using testing::ReasoningStreamMatchesParse;

ReasoningParseResult Parse(std::string_view output) {
  return CreateReasoningParser("openai")->Parse(output);
}

TEST(OpenAiReasoningParserTest, SplitsAnalysisFromTheFinalAnswer) {
  const ReasoningParseResult result = Parse(
      "<|channel|>analysis<|message|>User asks. Answer.<|end|><|start|>assistant<|channel|>final"
      "<|message|>Paris.<|return|>");
  EXPECT_EQ(result.reasoning_content, "User asks. Answer.");
  EXPECT_EQ(result.content, "Paris.");
  EXPECT_EQ(CreateReasoningParser("openai")->reasoning_end(), "<|channel|>final<|message|>");
}

TEST(OpenAiReasoningParserTest, JoinsMessagesWithNewlines) {
  const ReasoningParseResult result = Parse(
      "<|channel|>analysis<|message|>One.<|end|><|start|>assistant<|channel|>analysis<|message|>"
      "Two.<|end|><|start|>assistant<|channel|>commentary<|message|>Preamble.<|end|>"
      "<|start|>assistant<|channel|>final<|message|>Answer");
  EXPECT_EQ(result.reasoning_content, "One.\nTwo.");
  EXPECT_EQ(result.content, "Preamble.\nAnswer");
}

TEST(OpenAiReasoningParserTest, CutShortThinkingHasNoContent) {
  const ReasoningParseResult result = Parse("<|channel|>analysis<|message|>Hmm, the");
  EXPECT_EQ(result.reasoning_content, "Hmm, the");
  EXPECT_EQ(result.content, std::nullopt);
  EXPECT_EQ(Parse("").reasoning_content, std::nullopt);
}

TEST(OpenAiReasoningParserTest, KeepsToolCallMessagesForTheToolParser) {
  const std::string output =
      "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary"
      "<|message|>Checking.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary"
      " json<|message|>{\"city\":\"Paris\"}<|call|>";
  const ReasoningParseResult split = Parse(output);
  EXPECT_EQ(split.reasoning_content, "Need weather.");
  EXPECT_EQ(split.content,
            "Checking.<|start|>assistant<|channel|>commentary to=functions.get_weather "
            "json<|message|>{\"city\":\"Paris\"}<|call|>");
  const ToolParseResult calls = CreateToolParser("openai")->Parse(*split.content);
  ASSERT_EQ(calls.tool_calls.size(), 1u);
  EXPECT_EQ(calls.tool_calls[0].name, "get_weather");
  EXPECT_EQ(calls.tool_calls[0].arguments, R"({"city": "Paris"})");
  EXPECT_EQ(calls.content, "Checking.");
}

constexpr const char* kOutputs[] = {
    "<|channel|>analysis<|message|>Need <|en weather.<|end|><|start|>assistant<|channel|>commentary"
    "<|message|>Checking.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather "
    "<|constrain|>json<|message|>{\"city\":\"Par\xC3\xADs\"}<|call|>",
    "<|channel|>analysis<|message|>A<|end|><|start|>assistant<|channel|>analysis<|message|><|end|>"
    "<|start|>assistant<|channel|>final<|message|>B<|return|>",
    " to=functions.f<|channel|>commentary json<|message|>{\"n\": 1}",
    "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>analysis to=browser.open"
    "<|message|>{}<|call|>",
    "not harmony at all",
};

TEST(OpenAiReasoningParserTest, StreamingMatchesParseAtEverySplit) {
  for (const char* output : kOutputs) {
    EXPECT_TRUE(ReasoningStreamMatchesParse("openai", {}, output)) << output;
  }
}

// The handler's pipeline: reasoning parser first, its content into the tool parser, whole and
// streamed.
TEST(OpenAiReasoningParserTest, StreamedPipelineMatchesWholePipeline) {
  for (const char* output : kOutputs) {
    const ReasoningParseResult split = CreateReasoningParser("openai")->Parse(output);
    const ToolParseResult whole = CreateToolParser("openai")->Parse(split.content.value_or(""));
    for (const std::vector<std::string>& pieces : testing::Splits(output, 3)) {
      auto reasoning = CreateReasoningParser("openai");
      auto tools = CreateToolParser("openai");
      testing::StreamedOutput streamed;
      for (const std::string& piece : pieces) {
        const DeltaMessage step = reasoning->ParseDelta(piece);
        streamed.reasoning += step.reasoning_content;
        testing::Gather(tools->ParseDelta(step.content), &streamed);
      }
      const DeltaMessage last = reasoning->Finish();
      streamed.reasoning += last.reasoning_content;
      testing::Gather(tools->ParseDelta(last.content), &streamed);
      testing::Gather(tools->Finish(), &streamed);
      EXPECT_EQ(streamed.violation, "");
      EXPECT_EQ(streamed.reasoning, split.reasoning_content.value_or(""));
      EXPECT_EQ(streamed.content, whole.content.value_or(""));
      EXPECT_EQ(testing::Describe(streamed.calls), testing::Describe(whole.tool_calls));
    }
  }
}

}  // namespace
}  // namespace vllm::server
