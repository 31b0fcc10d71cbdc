// Tests of the mistral tool parser, in both of its forms.
#include <gtest/gtest.h>

#include "server/openai/output_parsers/stream_test_util.h"
#include "server/openai/output_parsers/tool_parser.h"

namespace vllm::server {
namespace {

using testing::StreamMatchesParse;
using testing::StreamTool;

ToolParseResult Parse(std::string_view output) {
  return CreateToolParser("mistral")->Parse(output);
}

TEST(MistralToolParserTest, ParsesTheJsonArrayForm) {
  const ToolParseResult result =
      Parse(R"(Sure.[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city":"Paris"}}, )"
            R"({"name": "now"}])");
  ASSERT_EQ(result.tool_calls.size(), 2u);
  EXPECT_EQ(result.tool_calls[0].name, "get_weather");
  EXPECT_EQ(result.tool_calls[0].arguments, R"({"city": "Paris"})");
  EXPECT_EQ(result.tool_calls[1].name, "now");
  EXPECT_EQ(result.tool_calls[1].arguments, "{}");  // vLLM's default
  EXPECT_EQ(result.content, "Sure.");
}

TEST(MistralToolParserTest, ParsesALoneObjectAsOneCall) {
  const ToolParseResult result = Parse(R"([TOOL_CALLS]{"name": "f", "arguments": null} junk)");
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].arguments, "null");
  EXPECT_EQ(result.content, std::nullopt);
}

TEST(MistralToolParserTest, ParsesTheNameForm) {
  const ToolParseResult result =
      Parse(R"(Checking.[TOOL_CALLS]get_weather[ARGS]{"city":"Paris"}[TOOL_CALLS]skipped)"
            R"([TOOL_CALLS]add{"a": 1,"b":2})");
  ASSERT_EQ(result.tool_calls.size(), 2u);
  EXPECT_EQ(result.tool_calls[0].name, "get_weather");
  EXPECT_EQ(result.tool_calls[0].arguments, R"({"city":"Paris"})");  // as written
  EXPECT_EQ(result.tool_calls[1].name, "add");
  EXPECT_EQ(result.tool_calls[1].arguments, R"({"a": 1,"b":2})");
  EXPECT_EQ(result.content, "Checking.");
}

TEST(MistralToolParserTest, OtherOutputIsContent) {
  for (const char* output : {
           "No tools needed.",
           "[TOOL_CALLS] []",
           "[TOOL_CALLS] [{\"arguments\": {}}]",
           "[TOOL_CALLS] [{\"name\": \"f\"},]",
           "[TOOL_CALLS] [{\"name\": \"f\"}",  // cut short
           "[TOOL_CALLS]no_arguments_yet",
           "[TOOL_CALLS]   ",
       }) {
    EXPECT_TRUE(testing::ParsesAsContentOnly("mistral", output));
  }
}

TEST(MistralToolParserTest, StreamingMatchesParseAtEverySplit) {
  for (const char* output : {
           R"(Sure.[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}, )"
           R"({"name": "now"}] )",
           R"([TOOL_CALLS][{"arguments": {"x": [1e1]}, "name": "late"}])",
           R"([TOOL_CALLS]{"name": "f", "arguments": null} junk)",
           R"(Checking.[TOOL_CALLS]get_weather[ARGS]{"city":"Paris"}[TOOL_CALLS]skipped)"
           R"([TOOL_CALLS]add{"a": [TOOL_CA)",
           R"([TOOL_CALLS] spaced[ARGS]{"a": 1})",
           "No tools needed. [TOOL_",
           "[TOOL_CALLS] []",
           "[TOOL_CALLS] [{\"arguments\": {}}] tail",
           "[TOOL_CALLS]no_arguments_yet",
           "[TOOL_CALLS]   ",
       }) {
    EXPECT_TRUE(StreamMatchesParse("mistral", output)) << output;
  }
}

TEST(MistralToolParserTest, StreamsNameFormArgumentsAsWritten) {
  auto parser = CreateToolParser("mistral");
  DeltaMessage delta = parser->ParseDelta("[TOOL_CALLS]get_");
  EXPECT_TRUE(delta.empty());
  delta = parser->ParseDelta("weather[ARGS]{\"ci");
  ASSERT_EQ(delta.tool_calls.size(), 1u);
  EXPECT_EQ(delta.tool_calls[0].name, "get_weather");
  EXPECT_EQ(delta.tool_calls[0].arguments, "{\"ci");
  delta = parser->ParseDelta("ty\": 1}[TOOL");
  EXPECT_EQ(delta.tool_calls[0].arguments, "ty\": 1}");
  delta = parser->Finish();
  EXPECT_EQ(delta.tool_calls[0].arguments, "[TOOL");  // not a marker after all
}

TEST(MistralToolParserTest, StreamingKeepsCallsOfACutArray) {
  const testing::StreamedOutput streamed =
      StreamTool("mistral", R"([TOOL_CALLS] [{"name": "f", "arguments": {"a": 1}})");
  ASSERT_EQ(streamed.calls.size(), 1u);
  EXPECT_EQ(streamed.calls[0].arguments, R"({"a": 1})");
}

}  // namespace
}  // namespace vllm::server
