// tools / tool_choice / parallel_tool_calls as vLLM checks them, and the constraints that
// `required` and a named function put on the output.
#include "server/openai/chat/tools.h"

#include <gtest/gtest.h>

namespace vllm::server {
namespace {

constexpr char kTools[] =
    R"("tools": [{"type": "function", "function": {"name": "get_weather", "parameters": )"
    R"({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},)"
    R"({"type": "function", "function": {"name": "now"}}])";

std::optional<ApiError> Parse(const std::string& fields, bool auto_tool_choice,
                              SamplingParams* params, ChatTools* tools) {
  auto body = ParseJsonObject("{" + fields + "}");
  EXPECT_TRUE(body.ok()) << fields;
  return ParseChatTools(*body, auto_tool_choice, params, tools);
}

TEST(ChatToolsTest, ChoicesAndTheirDefaults) {
  SamplingParams params;
  ChatTools tools;
  EXPECT_FALSE(Parse("\"messages\": []", false, &params, &tools));
  EXPECT_EQ(tools.choice, ToolChoiceKind::kNone);
  EXPECT_FALSE(Parse(std::string(kTools), true, &params, &tools));
  EXPECT_EQ(tools.choice, ToolChoiceKind::kAuto);
  EXPECT_FALSE(params.structured_outputs);
  EXPECT_FALSE(Parse(std::string(kTools) + ", \"tool_choice\": \"none\"", false, &params, &tools));
  EXPECT_EQ(tools.choice, ToolChoiceKind::kNone);
}

TEST(ChatToolsTest, RequiredConstrainsToAnArrayOfCalls) {
  SamplingParams params;
  ChatTools tools;
  ASSERT_FALSE(
      Parse(std::string(kTools) + R"(, "tool_choice": "required")", false, &params, &tools));
  EXPECT_EQ(tools.choice, ToolChoiceKind::kRequired);
  ASSERT_TRUE(params.structured_outputs && params.structured_outputs->json);
  const Json schema = Json::parse(*params.structured_outputs->json);
  EXPECT_EQ(schema["type"], "array");
  EXPECT_EQ(schema["minItems"], 1);
  EXPECT_FALSE(schema.contains("maxItems"));
  ASSERT_EQ(schema["items"]["anyOf"].size(), 2u);
  EXPECT_EQ(schema["items"]["anyOf"][0]["properties"]["name"]["enum"][0], "get_weather");
  EXPECT_EQ(schema["items"]["anyOf"][0]["properties"]["parameters"]["required"][0], "city");
  EXPECT_EQ(schema["items"]["anyOf"][1]["properties"]["parameters"]["type"], "object");

  SamplingParams single;
  ASSERT_FALSE(
      Parse(std::string(kTools) + R"(, "tool_choice": "required", "parallel_tool_calls": false)",
            false, &single, &tools));
  EXPECT_EQ(Json::parse(*single.structured_outputs->json)["maxItems"], 1);
}

TEST(ChatToolsTest, NamedFunctionConstrainsToItsParameters) {
  SamplingParams params;
  ChatTools tools;
  ASSERT_FALSE(
      Parse(std::string(kTools) +
                R"(, "tool_choice": {"type": "function", "function": {"name": "get_weather"}})",
            false, &params, &tools));
  EXPECT_EQ(tools.choice, ToolChoiceKind::kNamed);
  EXPECT_EQ(tools.function_name, "get_weather");
  EXPECT_EQ(Json::parse(*params.structured_outputs->json)["required"][0], "city");
}

TEST(ChatToolsTest, RefusalsCarryVllmsMessages) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("tool_choice": "auto")", "When using `tool_choice`, `tools` must be set."},
      {R"("tool_choice": "required")", "When using `tool_choice`, `tools` must be set."},
      {std::string(kTools),
       "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set"},
      {std::string(kTools) + R"(, "tool_choice": {"type": "function", "function": {"name": "x"}})",
       "Tool 'x' has not been passed in `tools`."},
      {R"("tools": [{"type": "function"}], "tool_choice": "none")",
       "tools: each tool needs a function with a string name"},
      {std::string(kTools) + R"(, "tool_choice": "sometimes")",
       "tool_choice must be \"none\", \"auto\", \"required\" or a named function"},
  };
  for (const auto& [fields, message] : cases) {
    SamplingParams params;
    ChatTools tools;
    auto error = Parse(fields, false, &params, &tools);
    ASSERT_TRUE(error.has_value()) << fields;
    EXPECT_EQ(error->message, message) << fields;
    EXPECT_EQ(static_cast<int>(error->status), 400);
  }
  SamplingParams params;
  params.structured_outputs = StructuredOutputsParams{.regex = "a"};
  ChatTools tools;
  EXPECT_TRUE(
      Parse(std::string(kTools) + R"(, "tool_choice": "required")", false, &params, &tools));
}

TEST(ChatToolsTest, ToolCallIdsAreVllmShaped) {
  const std::string id = MakeToolCallId();
  EXPECT_EQ(id.rfind("chatcmpl-tool-", 0), 0u);
  EXPECT_EQ(id.size(), std::string("chatcmpl-tool-").size() + 32);
  EXPECT_NE(id, MakeToolCallId());
}

}  // namespace
}  // namespace vllm::server
