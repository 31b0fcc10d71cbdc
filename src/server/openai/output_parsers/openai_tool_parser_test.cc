// Tests of the openai (gpt-oss harmony) tool parser.
#include <gtest/gtest.h>

#include "server/openai/output_parsers/stream_test_util.h"
#include "server/openai/output_parsers/tool_parser.h"

namespace vllm::server {
namespace {

using testing::StreamMatchesParse;
using testing::StreamTool;

constexpr std::string_view kWeatherCall =
    "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary "
    "to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>";

ToolParseResult Parse(std::string_view output) { return CreateToolParser("openai")->Parse(output); }

TEST(OpenAiToolParserTest, ParsesACommentaryCall) {
  const ToolParseResult result = Parse(kWeatherCall);
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].name, "get_weather");
  EXPECT_EQ(result.tool_calls[0].arguments, R"({"city": "Paris"})");
  EXPECT_EQ(result.content, std::nullopt);
}

TEST(OpenAiToolParserTest, ParsesRecipientBeforeChannelAndMissingStopToken) {
  ToolParseResult result = Parse(
      "<|channel|>analysis<|message|>x<|end|><|start|>assistant to=functions.lookup"
      "<|channel|>commentary json<|message|>{\"q\": [1, 2.0]}");
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].name, "lookup");
  EXPECT_EQ(result.tool_calls[0].arguments, R"({"q": [1, 2.0]})");
  result = Parse(" to=functions.now<|channel|>commentary json<|message|>{}");
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].name, "now");
}

TEST(OpenAiToolParserTest, EscapesNonAsciiArgumentsAsJsonDumps) {
  const ToolParseResult result = Parse(
      "<|channel|>commentary to=functions.f "
      "<|constrain|>json<|message|>{\"city\":\"Z\xC3\xBCrich\"}");
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].arguments, R"({"city": "Z\u00fcrich"})");
}

TEST(OpenAiToolParserTest, KeepsRawArgumentsThatAreNotJson) {
  ToolParseResult result = Parse(
      "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{city: Paris}<|call|>");
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].arguments, "{city: Paris}");
  result = Parse("<|channel|>commentary to=functions.run code<|message|>print( 1 )<|call|>");
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].arguments, "print( 1 )");
}

TEST(OpenAiToolParserTest, ContentIsTheFinalAndPreambleText) {
  ToolParseResult result = Parse(
      "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>"
      "It is sunny.<|return|>");
  EXPECT_TRUE(result.tool_calls.empty());
  EXPECT_EQ(result.content, "It is sunny.");
  result = Parse(
      "<|channel|>commentary<|message|>Let me check.<|end|><|start|>assistant<|channel|>commentary "
      "to=browser.search<|message|>{}<|call|><|start|>assistant<|channel|>commentary "
      "to=functions.f <|constrain|>json<|message|>{\"a\":1}<|call|>");
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].name, "f");
  EXPECT_EQ(result.content, "Let me check.");
  EXPECT_EQ(Parse("<|channel|>analysis<|message|>Only thinking").content, std::nullopt);
}

TEST(OpenAiToolParserTest, ReadsTheReasoningParsersContent) {
  const ToolParseResult result = Parse(
      "Let me check.<|start|>assistant<|channel|>commentary to=functions.f "
      "<|constrain|>json<|message|>{\"a\": true}<|call|>");
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].arguments, R"({"a": true})");
  EXPECT_EQ(result.content, "Let me check.");
  EXPECT_EQ(Parse("A plain answer.").content, "A plain answer.");
}

TEST(OpenAiToolParserTest, StreamingMatchesParseAtEverySplit) {
  for (std::string_view output : {
           kWeatherCall,
           std::string_view("<|channel|>commentary<|message|>Checking \xC3\xA9.<|end|><|start|>"
                            "assistant to=functions.a<|channel|>commentary json<|message|>"
                            "{\"x\": \"\xF0\x9F\x98\x80\", \"n\": 1e3}<|call|><|start|>assistant"
                            "<|channel|>commentary to=functions.b <|constrain|>json<|message|>7"),
           std::string_view("<|channel|>final<|message|>Line one<|end|><|start|>assistant"
                            "<|channel|>final<|message|><|end|><|start|>assistant<|channel|>final"
                            "<|message|>three"),
           std::string_view("Plain text with <|chan and to="),
           std::string_view("<|channel|>commentary to=functions.run code<|message|>x <|en"),
       }) {
    EXPECT_TRUE(StreamMatchesParse("openai", output)) << output;
  }
}

TEST(OpenAiToolParserTest, StreamsTheNameAtTheHeader) {
  auto parser = CreateToolParser("openai");
  DeltaMessage delta = parser->ParseDelta(
      "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"ci");
  ASSERT_EQ(delta.tool_calls.size(), 1u);
  EXPECT_EQ(delta.tool_calls[0].name, "get_weather");
  EXPECT_EQ(delta.tool_calls[0].arguments, "{\"ci");
  delta = parser->ParseDelta("ty\":\"Paris\"}<|call|>");
  EXPECT_EQ(delta.tool_calls[0].arguments, "ty\": \"Paris\"}");
}

// Documented difference: invalid JSON arguments stream up to the last valid byte, Parse keeps
// the raw text.
TEST(OpenAiToolParserTest, StreamingStopsArgumentsAtInvalidJson) {
  const std::string output =
      "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": 1, b}<|call|>";
  const testing::StreamedOutput streamed = StreamTool("openai", output);
  ASSERT_EQ(streamed.calls.size(), 1u);
  EXPECT_EQ(streamed.calls[0].arguments, R"({"a": 1, )");
  EXPECT_EQ(Parse(output).tool_calls[0].arguments, R"({"a": 1, b})");
}

}  // namespace
}  // namespace vllm::server
