#include "server/openai/responses/output_items.h"

#include <gtest/gtest.h>

namespace vllm::server {
namespace {

std::vector<std::string> TypesOf(const std::vector<Json>& events) {
  std::vector<std::string> types;
  for (const Json& event : events) types.push_back(event["type"]);
  return types;
}

TEST(ResponseOutputBuilderTest, StreamedTextMakesOneMessageWithItsEventsInOrder) {
  ResponseOutputBuilder builder;
  std::vector<Json> events;
  builder.Add({{"content", "Hel"}}, nullptr, &events);
  builder.Add({{"content", ""}}, nullptr, &events);  // an empty delta makes nothing
  builder.Add({{"content", "lo"}}, nullptr, &events);
  builder.Finish(&events);
  EXPECT_EQ(TypesOf(events),
            (std::vector<std::string>{"response.output_item.added", "response.content_part.added",
                                      "response.output_text.delta", "response.output_text.delta",
                                      "response.output_text.done", "response.content_part.done",
                                      "response.output_item.done"}));
  const Json& message = builder.output().at(0);
  EXPECT_EQ(builder.output().size(), 1u);
  EXPECT_EQ(message["type"], "message");
  EXPECT_EQ(message["status"], "completed");
  EXPECT_EQ(message["content"][0]["text"], "Hello");
  EXPECT_EQ(events[4]["text"], "Hello");
  EXPECT_EQ(events[6]["item"], message);
  EXPECT_EQ(message["id"].get<std::string>().rfind("msg_", 0), 0u);
  for (size_t i = 1; i < 6; ++i) EXPECT_EQ(events[i]["item_id"], message["id"]);
}

TEST(ResponseOutputBuilderTest, ReasoningThenAnswerThenToolCallsAreSeparateItems) {
  ResponseOutputBuilder builder;
  std::vector<Json> events;
  builder.Add({{"reasoning_content", "think"}}, nullptr, &events);
  builder.Add({{"content", "ok"}}, nullptr, &events);
  builder.Add(Json::parse(R"({"tool_calls": [{"index": 0, "id": "chatcmpl-tool-1",
      "type": "function", "function": {"name": "f", "arguments": "{\"a\""}}]})"),
              nullptr, &events);
  builder.Add(Json::parse(R"({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]})"),
              nullptr, &events);
  builder.Finish(&events);
  const Json& output = builder.output();
  ASSERT_EQ(output.size(), 3u);
  EXPECT_EQ(output[0]["type"], "reasoning");
  EXPECT_EQ(output[0]["content"][0], Json::parse(R"({"type": "reasoning_text", "text": "think"})"));
  EXPECT_EQ(output[1]["content"][0]["text"], "ok");
  EXPECT_EQ(output[2]["type"], "function_call");
  EXPECT_EQ(output[2]["name"], "f");
  EXPECT_EQ(output[2]["arguments"], "{\"a\": 1}");
  EXPECT_EQ(output[2]["call_id"].get<std::string>().rfind("call_", 0), 0u);
  EXPECT_EQ(events.back()["type"], "response.output_item.done");
  EXPECT_EQ(events[events.size() - 2]["type"], "response.function_call_arguments.done");
  EXPECT_EQ(events[events.size() - 2]["arguments"], "{\"a\": 1}");
  // Each item is closed before the next opens.
  int open = 0;
  for (const Json& event : events) {
    if (event["type"] == "response.output_item.added") {
      EXPECT_EQ(++open, 1);
    }
    if (event["type"] == "response.output_item.done") {
      EXPECT_EQ(--open, 0);
    }
  }
}

TEST(ResponseOutputBuilderTest, LogprobsGoIntoTheDeltaAndThePart) {
  ResponseOutputBuilder builder;
  std::vector<Json> events;
  const Json logprobs = Json::parse(R"([{"token": "a", "logprob": -0.5, "bytes": [97],
                                         "top_logprobs": []}])");
  builder.Add({{"content", "a"}}, logprobs, &events);
  builder.Finish(&events);
  EXPECT_EQ(events[2]["logprobs"], logprobs);
  EXPECT_EQ(builder.output()[0]["content"][0]["logprobs"], logprobs);
}

TEST(ResponseObjectTest, StatusFollowsTheFinishReason) {
  Json response = ResponseObject("resp_1", 5, "m", {{"store", true}}, "", Json::array(),
                                 ResponseUsage(3, 1, 2));
  EXPECT_EQ(response["object"], "response");
  EXPECT_EQ(response["store"], true);
  EXPECT_EQ(response["usage"]["total_tokens"], 5);
  EXPECT_EQ(response["usage"]["input_tokens_details"]["cached_tokens"], 1);
  SetResponseStatus("stop", &response);
  EXPECT_EQ(response["status"], "completed");
  SetResponseStatus("length", &response);
  EXPECT_EQ(response["status"], "incomplete");
  EXPECT_EQ(response["incomplete_details"]["reason"], "max_output_tokens");
  SetResponseStatus("abort", &response);
  EXPECT_EQ(response["status"], "cancelled");
}

}  // namespace
}  // namespace vllm::server
