// A chat reply's text as the assistant message, whole and streamed: reasoning split off, tool
// calls read by the parser or from the constrained output, and the last delta carrying what the
// parsers held back together with its own text.
#include "server/openai/chat/chat_output.h"

#include <gtest/gtest.h>

namespace vllm::server {
namespace {

ChatOutputConfig AutoHermes() {
  ChatOutputConfig config;
  config.tool_parser = "hermes";
  config.tools.choice = ToolChoiceKind::kAuto;
  return config;
}

TEST(ChatOutputTest, WholeReplyWithReasoningAndAToolCall) {
  ChatOutputConfig config = AutoHermes();
  config.reasoning_parser = "deepseek_r1";
  const AssistantMessage message = ParseAssistantMessage(
      config,
      "plan</think>Sure.<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>");
  EXPECT_EQ(message.reasoning_content, "plan");
  EXPECT_EQ(message.content, "Sure.");
  ASSERT_EQ(message.tool_calls.size(), 1u);
  EXPECT_EQ(message.tool_calls[0]["function"]["name"], "f");
  EXPECT_EQ(message.tool_calls[0]["function"]["arguments"], "{\"a\": 1}");
  EXPECT_TRUE(message.auto_tools_called);
}

TEST(ChatOutputTest, TheLastDeltaKeepsItsTextAndWhatWasHeldBack) {
  ChatOutputConfig config = AutoHermes();
  ChatDeltaParser parser(config);
  // "<tool" may start <tool_call>: held back until the reply ends.
  const Json delta = parser.Next("Hello <tool", /*is_last=*/true);
  EXPECT_EQ(delta.value("content", std::string()), "Hello <tool");
  EXPECT_FALSE(parser.auto_tools_called());
}

TEST(ChatOutputTest, NamedFunctionStreamsItsArgumentsUnderOneCall) {
  ChatOutputConfig config;
  config.tools = {.choice = ToolChoiceKind::kNamed, .function_name = "f"};
  ChatDeltaParser parser(config);
  const Json first = parser.Next("{\"a\":", false);
  const Json last = parser.Next(" 1}", true);
  ASSERT_EQ(first["tool_calls"].size(), 1u);
  EXPECT_EQ(first["tool_calls"][0]["function"]["name"], "f");
  EXPECT_FALSE(last["tool_calls"][0].contains("id"));
  EXPECT_EQ(first["tool_calls"][0]["function"]["arguments"].get<std::string>() +
                last["tool_calls"][0]["function"]["arguments"].get<std::string>(),
            "{\"a\": 1}");
}

TEST(ChatOutputTest, RequiredCallsStreamOnceEachObjectCloses) {
  ChatOutputConfig config;
  config.tools.choice = ToolChoiceKind::kRequired;
  ChatDeltaParser parser(config);
  EXPECT_FALSE(parser.Next("[{\"name\": \"f\", \"parameters\": {\"a\": \"}\"", false)
                   .contains("tool_calls"));
  const Json delta = parser.Next("}}, {\"name\": \"g\", \"parameters\": {}}]", true);
  ASSERT_EQ(delta["tool_calls"].size(), 2u);
  EXPECT_EQ(delta["tool_calls"][0]["function"]["arguments"], "{\"a\": \"}\"}");
  EXPECT_EQ(delta["tool_calls"][1]["index"], 1);
  EXPECT_EQ(delta["tool_calls"][1]["function"]["name"], "g");
}

}  // namespace
}  // namespace vllm::server
