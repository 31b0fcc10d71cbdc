// Tests of the hermes tool parser: whole outputs as vLLM parses them, streaming against Parse at
// every split, and the documented differences on malformed or cut-short calls.
#include <gtest/gtest.h>

#include "server/openai/output_parsers/stream_test_util.h"
#include "server/openai/output_parsers/tool_parser.h"

namespace vllm::server {
namespace {

using testing::StreamMatchesParse;
using testing::StreamTool;

ToolParseResult Parse(std::string_view output) { return CreateToolParser("hermes")->Parse(output); }

TEST(HermesToolParserTest, ParsesACallAndTheContentBeforeIt) {
  const ToolParseResult result = Parse(
      "Let me check.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\","
      "\"unit\":\"c\"}}\n</tool_call>");
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].name, "get_weather");
  EXPECT_EQ(result.tool_calls[0].arguments, R"({"city": "Paris", "unit": "c"})");
  EXPECT_EQ(result.content, "Let me check.");
}

TEST(HermesToolParserTest, ParsesSeveralCallsAndDropsTextBetweenThem) {
  const ToolParseResult result = Parse(
      "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1.50}}\n</tool_call>\nand\n"
      "<tool_call>{\"name\": \"b\", \"arguments\": {\"q\": \"caf\\u00e9 \xC3\xA9\"}}</tool_call> "
      "trailing");
  ASSERT_EQ(result.tool_calls.size(), 2u);
  EXPECT_EQ(result.tool_calls[0].arguments, R"({"x": 1.5})");
  EXPECT_EQ(result.tool_calls[1].name, "b");
  EXPECT_EQ(result.tool_calls[1].arguments, "{\"q\": \"caf\xC3\xA9 \xC3\xA9\"}");
  EXPECT_EQ(result.content, std::nullopt);
}

TEST(HermesToolParserTest, TextWithoutCallsIsContent) {
  EXPECT_TRUE(testing::ParsesAsContentOnly("hermes", "Paris is sunny. </tool_call>"));
}

TEST(HermesToolParserTest, AnUnclosedCallWithCompleteJsonIsACall) {
  const ToolParseResult result = Parse("<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n");
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].arguments, "{}");
}

TEST(HermesToolParserTest, AMalformedCallMakesEverythingContent) {
  for (const char* output : {
           "Hi<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}}\n</tool_call>",
           "<tool_call>{\"name\": \"f\"}</tool_call>",  // no arguments (KeyError)
           "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call><tool_call>oops</tool_call>",
           "<tool_call></tool_call>",
           "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1",  // cut short
           "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool",  // cut in the end tag
       }) {
    EXPECT_TRUE(testing::ParsesAsContentOnly("hermes", output));
  }
}

TEST(HermesToolParserTest, StreamingMatchesParseAtEverySplit) {
  for (const char* output : {
           "Let me check.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
           "\"Paris\", \"days\": [1, 2e1, -0]}}\n</tool_call>",
           "<tool_call>{\"arguments\": {\"z\": \"\\u00e9\\ud83d\\ude00\"}, \"name\": \"late_name\"}"
           "</tool_call>\n<tool_call>{\"name\": \"b\", \"arguments\": 3}</tool_call>tail",
           "<tool_call>{\"name\": \"f\", \"arguments\": {}}\n",
           "no calls at all, just < and <tool and </tool_call>",
           "<tool_call>\nnot json</tool_call> so it is all content",
           "Text <tool_call>{\"arguments\": {}, \"x\": ]}</tool_call>",
           "<tool_call>{\"name\": \"f",  // cut before the name was sent
           "<tool_call>{\"arguments\": {\"s\": \"</tool_call>\"}, \"name\": \"f\"}</tool_call>",
           "",
       }) {
    EXPECT_TRUE(StreamMatchesParse("hermes", output)) << output;
  }
}

TEST(HermesToolParserTest, StreamingHoldsBackOnlyAPossibleMarker) {
  auto parser = CreateToolParser("hermes");
  EXPECT_EQ(parser->ParseDelta("Hello <").content, "Hello ");
  EXPECT_EQ(parser->ParseDelta("b> <tool").content, "<b> ");
  DeltaMessage delta = parser->ParseDelta("_call>{\"name\": \"f\", \"arg");
  EXPECT_EQ(delta.content, "");
  ASSERT_EQ(delta.tool_calls.size(), 1u);
  EXPECT_EQ(delta.tool_calls[0].name, "f");
  EXPECT_EQ(delta.tool_calls[0].arguments, "");
  delta = parser->ParseDelta("uments\": {\"a\": \"x");
  ASSERT_EQ(delta.tool_calls.size(), 1u);
  EXPECT_FALSE(delta.tool_calls[0].name.has_value());
  EXPECT_EQ(delta.tool_calls[0].arguments, "{\"a\": \"x");
  delta = parser->ParseDelta("y\"}}</tool_call>");
  EXPECT_EQ(delta.tool_calls[0].arguments, "y\"}");
  EXPECT_TRUE(parser->Finish().empty());
}

// Documented differences: once a name was streamed, a later malformation cannot be taken back.
TEST(HermesToolParserTest, StreamingKeepsCallsSentBeforeAMalformation) {
  const std::string extra_brace =
      "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}}</tool_call>";
  testing::StreamedOutput streamed = StreamTool("hermes", extra_brace);
  ASSERT_EQ(streamed.calls.size(), 1u);
  EXPECT_EQ(streamed.calls[0].arguments, R"({"a": 1})");
  EXPECT_EQ(streamed.content, "");

  const std::string cut = "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": [12";
  streamed = StreamTool("hermes", cut);
  ASSERT_EQ(streamed.calls.size(), 1u);
  EXPECT_EQ(streamed.calls[0].arguments, R"({"a": [12)");  // the partial arguments, flushed
  EXPECT_EQ(Parse(cut).content, cut);
}

}  // namespace
}  // namespace vllm::server
