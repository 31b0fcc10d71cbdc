#include "server/openai/responses/protocol.h"

#include <gtest/gtest.h>

#include "server/openai/responses/input_items.h"

namespace vllm::server {
namespace {

ResponsesRequest Parse(const char* body) {
  ResponsesRequest request;
  auto error = ParseResponsesRequest(*ParseJsonObject(body), &request);
  EXPECT_FALSE(error.has_value()) << error->message;
  return request;
}

// The 400's message for `body`.
std::string ErrorOf(const char* body) {
  ResponsesRequest request;
  auto error = ParseResponsesRequest(*ParseJsonObject(body), &request);
  if (!error) return "";
  EXPECT_EQ(error->status, boost::beast::http::status::bad_request);
  return error->message;
}

TEST(ResponsesProtocolTest, StringInputIsOneUserMessageAfterTheInstructions) {
  ResponsesRequest request = Parse(R"({"input": "hi", "instructions": "be brief",
                                       "max_output_tokens": 7, "temperature": 0.5})");
  EXPECT_EQ(ConversationMessages(request, Json::array()),
            Json::parse(R"([{"role": "system", "content": "be brief"},
                            {"role": "user", "content": "hi"}])"));
  EXPECT_EQ(request.chat_body["max_tokens"], 7);
  EXPECT_EQ(request.chat_body["temperature"], 0.5);
  EXPECT_FALSE(request.chat_body.contains("max_output_tokens"));
  EXPECT_FALSE(request.chat_body.contains("input"));
  EXPECT_TRUE(request.store);
  EXPECT_EQ(request.echoed["instructions"], "be brief");
  EXPECT_EQ(request.echoed["max_output_tokens"], 7);
  EXPECT_EQ(request.echoed["tool_choice"], "auto");
}

TEST(ResponsesProtocolTest, ItemsBecomeChatMessagesWithToolCallsAndToolOutputs) {
  ResponsesRequest request = Parse(R"({"input": [
      {"role": "developer", "content": "rules"},
      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"},
                                                      {"type": "input_text", "text": "b"}]},
      {"type": "reasoning", "id": "rs_1", "summary": []},
      {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"},
      {"type": "function_call", "call_id": "call_2", "name": "g", "arguments": "{\"x\": 1}"},
      {"type": "function_call_output", "call_id": "call_1", "output": "42"}]})");
  EXPECT_EQ(request.input_messages, Json::parse(R"([
      {"role": "system", "content": "rules"},
      {"role": "user", "content": "a\nb"},
      {"role": "assistant", "content": null, "tool_calls": [
          {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
          {"id": "call_2", "type": "function", "function": {"name": "g", "arguments": "{\"x\": 1}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "42"}])"));
}

TEST(ResponsesProtocolTest, EarlierConversationComesBetweenInstructionsAndInput) {
  ResponsesRequest request = Parse(R"({"input": "again", "instructions": "sys"})");
  Json earlier = Json::array({{{"role", "user"}, {"content", "first"}}});
  AppendOutputMessages(Json::parse(R"([
      {"type": "reasoning", "content": [{"type": "reasoning_text", "text": "hm"}]},
      {"type": "message", "role": "assistant",
       "content": [{"type": "output_text", "text": "answer", "annotations": []}]}])"),
                       &earlier);
  EXPECT_EQ(ConversationMessages(request, earlier), Json::parse(R"([
      {"role": "system", "content": "sys"}, {"role": "user", "content": "first"},
      {"role": "assistant", "content": "answer"}, {"role": "user", "content": "again"}])"));
}

TEST(ResponsesProtocolTest, FunctionToolsToolChoiceAndTextFormatTakeTheirChatShapes) {
  ResponsesRequest request = Parse(R"({"input": "x",
      "tools": [{"type": "function", "name": "get", "description": "d",
                 "parameters": {"type": "object"}, "strict": true}],
      "tool_choice": {"type": "function", "name": "get"},
      "text": {"format": {"type": "json_schema", "name": "out", "schema": {"type": "object"}}}})");
  EXPECT_EQ(request.chat_body["tools"], Json::parse(R"([{"type": "function", "function":
      {"name": "get", "description": "d", "parameters": {"type": "object"}, "strict": true}}])"));
  EXPECT_EQ(request.chat_body["tool_choice"],
            Json::parse(R"({"type": "function", "function": {"name": "get"}})"));
  EXPECT_EQ(request.chat_body["response_format"], Json::parse(R"({"type": "json_schema",
                            "json_schema": {"name": "out", "schema": {"type": "object"}}})"));
  // The response repeats the tools as the request gave them.
  EXPECT_EQ(request.echoed["tools"][0]["name"], "get");
  EXPECT_EQ(Parse(R"({"input": "x", "text": {"format": {"type": "json_object"}}})")
                .chat_body["response_format"],
            Json::parse(R"({"type": "json_object"})"));
}

TEST(ResponsesProtocolTest, ChatOnlyFieldsDoNotLeakIntoTheChatBody) {
  ResponsesRequest request =
      Parse(R"({"input": "x", "messages": [{"role": "user", "content": "y"}], "n": 3,
                "max_tokens": 5, "top_logprobs": 2})");
  for (const char* field : {"messages", "n", "max_tokens", "top_logprobs", "logprobs"}) {
    EXPECT_FALSE(request.chat_body.contains(field)) << field;
  }
  ResponsesRequest with_logprobs =
      Parse(R"({"input": "x", "top_logprobs": 2, "include": ["message.output_text.logprobs"]})");
  EXPECT_TRUE(with_logprobs.include_logprobs);
  EXPECT_EQ(with_logprobs.chat_body["logprobs"], true);
  EXPECT_EQ(with_logprobs.chat_body["top_logprobs"], 2);
}

TEST(ResponsesProtocolTest, BadRequestsAreClearErrors) {
  EXPECT_EQ(ErrorOf(R"({"model": "m"})"), "input: Field required");
  EXPECT_NE(ErrorOf(R"({"input": 3})").find("string or list"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"input": [{"type": "image_generation_call"}]})").find("not supported"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"input": [{"role": "user", "content": [{"type": "input_image"}]}]})")
                .find("input_image"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"input": [{"role": "robot", "content": "x"}]})").find("role"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"input": [{"type": "function_call", "name": "f"}]})").find("call_id"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"input": "x", "tools": [{"type": "web_search"}]})").find("web_search"),
            std::string::npos);
  for (const char* type : {"web_search_preview", "file_search", "code_interpreter", "mcp",
                           "computer_use_preview", "image_generation"}) {
    const std::string body = std::string(R"({"input": "x", "tools": [{"type": ")") + type + "\"}]}";
    EXPECT_EQ(ErrorOf(body.c_str()), "tools: tool type '" + std::string(type) +
                                         "' is not supported: built-in tools need Harmony (a "
                                         "gpt-oss model) and a tool server; only function tools "
                                         "are served");
  }
  EXPECT_EQ(ErrorOf(R"({"input": "x", "tool_choice": {"type": "mcp"}})"),
            "tool_choice: type 'mcp' is not supported: only function tools are served");
  EXPECT_NE(ErrorOf(R"({"input": "x", "tool_choice": "sometimes"})").find("tool_choice: must be"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"input": "x", "text": {"format": {"type": "xml"}}})").find("text.format"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(R"({"input": "x", "background": true, "store": false})"),
            "background can only be used when `store` is true");
  EXPECT_NE(ErrorOf(R"({"input": "x", "max_output_tokens": "9"})").find("max_output_tokens"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(R"({"input": "x", "max_output_tokens": 0})"),
            "max_output_tokens must be at least 1, got 0.");
  EXPECT_NE(ErrorOf(R"({"input": "x", "store": "yes"})").find("store"), std::string::npos);
}

}  // namespace
}  // namespace vllm::server
