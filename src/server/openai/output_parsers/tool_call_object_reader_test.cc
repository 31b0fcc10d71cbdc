// Tests of ToolCallObjectReader / ReadToolCallObject / StreamedToolCall: which objects are calls,
// which keys give the arguments, and how a call streams.
#include "server/openai/output_parsers/tool_call_object_reader.h"

#include <gtest/gtest.h>

#include "server/openai/output_parsers/streamed_tool_call.h"

namespace vllm::server {
namespace {

std::optional<ParsedToolCall> Read(std::string_view text,
                                   ToolCallObjectReader::Options options = {}) {
  size_t used = 0;
  return ReadToolCallObject(text, options, &used);
}

TEST(ToolCallObjectReaderTest, ReadsNameAndNormalizedArguments) {
  const auto call = Read(R"(  {"name":"get_weather","arguments":{"city":"Paris","days":2}})");
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(call->name, "get_weather");
  EXPECT_EQ(call->arguments, R"({"city": "Paris", "days": 2})");
}

TEST(ToolCallObjectReaderTest, TakesKeysInAnyOrderAndSkipsOthers) {
  const auto call = Read(R"({"arguments": [1, {"x": null}], "id": {"deep": [1, 2]}, "name": "f"})");
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(call->name, "f");
  EXPECT_EQ(call->arguments, R"([1, {"x": null}])");
  // Escaped key and name are decoded.
  const auto escaped = Read(R"({"n\u0061me": "caf\u00e9", "arguments": "s"})");
  ASSERT_TRUE(escaped.has_value());
  EXPECT_EQ(escaped->name, "café");
  EXPECT_EQ(escaped->arguments, R"("s")");
}

TEST(ToolCallObjectReaderTest, RejectsMalformedCalls) {
  for (const char* text :
       {R"({"arguments": {}})", R"({"name": "f"})", R"({"name": 3, "arguments": {}})",
        R"({"name": "f", "name": "g", "arguments": {}})",
        R"({"name": "f", "arguments": {}, "arguments": {}})", R"(["name"])",
        R"({"name": "f", "arguments": {},})", R"({"name": "f" "arguments": {}})",
        R"({"name": "f", "arguments": {})", "not json", ""}) {
    EXPECT_FALSE(Read(text).has_value()) << text;
  }
}

TEST(ToolCallObjectReaderTest, ArgumentKeysAndDefaults) {
  const ToolCallObjectReader::Options llama = {.argument_keys = {"arguments", "parameters"}};
  auto call = Read(R"({"name": "f", "parameters": {"a": 1}})", llama);
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(call->arguments, R"({"a": 1})");
  call = Read(R"({"name": "f", "parameters": {"a": 1}, "arguments": {"b": 2}})", llama);
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(call->arguments, R"({"a": 1})");  // the first present wins
  const ToolCallObjectReader::Options optional = {.arguments_required = false};
  call = Read(R"({"name": "f"})", optional);
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(call->arguments, "{}");
}

TEST(ToolCallObjectReaderTest, ReportsBytesUsed) {
  size_t used = 0;
  const std::string_view text = R"({"name": "f", "arguments": 7}; {"name": "g"})";
  const auto call = ReadToolCallObject(text, {}, &used);
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(call->arguments, "7");
  EXPECT_EQ(text.substr(used), R"(; {"name": "g"})");
}

TEST(StreamedToolCallTest, SendsNameThenArgumentFragments) {
  StreamedToolCall call(3, {});
  DeltaMessage delta;
  call.Feed(R"({"arguments": {"a": )", &delta);
  EXPECT_TRUE(delta.tool_calls.empty());  // the arguments wait for the name
  call.Feed(R"("x"}, "name": "f)", &delta);
  EXPECT_TRUE(delta.tool_calls.empty());
  call.Feed(R"(")", &delta);
  ASSERT_EQ(delta.tool_calls.size(), 1u);
  EXPECT_EQ(delta.tool_calls[0].index, 3);
  EXPECT_EQ(delta.tool_calls[0].name, "f");
  EXPECT_EQ(delta.tool_calls[0].arguments, R"({"a": "x"})");

  StreamedToolCall cut(0, {});
  DeltaMessage first;
  cut.Feed(R"({"name": "g", "arguments": {"n": 12)", &first);
  ASSERT_EQ(first.tool_calls.size(), 1u);
  EXPECT_EQ(first.tool_calls[0].arguments, R"({"n": )");
  DeltaMessage last;
  cut.Finish(&last);
  ASSERT_EQ(last.tool_calls.size(), 1u);
  EXPECT_FALSE(last.tool_calls[0].name.has_value());
  EXPECT_EQ(last.tool_calls[0].arguments, "12");
}

}  // namespace
}  // namespace vllm::server
