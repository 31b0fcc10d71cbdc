// Tests of the llama3_json tool parser.
#include <gtest/gtest.h>

#include "server/openai/output_parsers/stream_test_util.h"
#include "server/openai/output_parsers/tool_parser.h"

namespace vllm::server {
namespace {

using testing::StreamMatchesParse;
using testing::StreamTool;

ToolParseResult Parse(std::string_view output) {
  return CreateToolParser("llama3_json")->Parse(output);
}

TEST(Llama3JsonToolParserTest, ParsesTaggedAndBareCalls) {
  ToolParseResult result =
      Parse(R"(<|python_tag|>{"name": "get_weather", "parameters": {"city":"Paris"}})");
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].name, "get_weather");
  EXPECT_EQ(result.tool_calls[0].arguments, R"({"city": "Paris"})");
  EXPECT_EQ(result.content, std::nullopt);

  result = Parse(R"({"name": "a", "arguments": {}}; {"name": "b", "parameters": {"x": 1E2}})");
  ASSERT_EQ(result.tool_calls.size(), 2u);
  EXPECT_EQ(result.tool_calls[0].arguments, "{}");
  EXPECT_EQ(result.tool_calls[1].name, "b");
  EXPECT_EQ(result.tool_calls[1].arguments, R"({"x": 100.0})");
}

TEST(Llama3JsonToolParserTest, OtherOutputIsContent) {
  for (const char* output : {
           "The weather is nice.",
           "Sure! {\"name\": \"f\", \"parameters\": {}}",  // calls must start the output
           "<|python_tag|>print('hi')",
           "{\"foo\": 1}",                                   // no name
           "{\"name\": \"f\"}",                              // no arguments
           "{\"name\": \"f\", \"parameters\": {}}; {oops}",  // a malformed second object
           "{\"name\": \"f\", \"parameters\": {\"a\": ",     // cut short
           " {\"name\": \"f\", \"parameters\": {}}",
           "",
       }) {
    EXPECT_TRUE(testing::ParsesAsContentOnly("llama3_json", output));
  }
}

TEST(Llama3JsonToolParserTest, FirstArgumentsKeyWins) {
  const ToolParseResult result =
      Parse(R"({"name": "f", "parameters": {"p": 1}, "arguments": {"q": 2}})");
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].arguments, R"({"p": 1})");
}

TEST(Llama3JsonToolParserTest, StreamingMatchesParseAtEverySplit) {
  for (const char* output : {
           R"(<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris", "n": [1.0]}})",
           R"({"name": "a", "arguments": {"s": "x;y{"}}; {"parameters": {"t": null}, "name": "b"})",
           "The weather is nice.",
           "<|python",
           "<|python_tag|>no object",
           R"({"foo": 1} then text)",
           R"({"name": "f)",
           R"(<|python_tag|>{"name": 3, "parameters": {}})",
       }) {
    EXPECT_TRUE(StreamMatchesParse("llama3_json", output)) << output;
  }
}

TEST(Llama3JsonToolParserTest, StreamingKeepsCallsSentBeforeAMalformation) {
  const testing::StreamedOutput streamed =
      StreamTool("llama3_json", R"({"name": "f", "parameters": {}}; {oops})");
  ASSERT_EQ(streamed.calls.size(), 1u);
  EXPECT_EQ(streamed.calls[0].arguments, "{}");
  EXPECT_EQ(streamed.content, "");
}

}  // namespace
}  // namespace vllm::server
