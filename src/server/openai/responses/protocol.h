// POST /v1/responses: the request, read as vLLM's ResponsesRequest reads it, and turned into the
// chat completion it amounts to (the chat route's parsing, template, tools and structured outputs
// then do the rest): input items → messages, instructions → a first system message,
// max_output_tokens → max_tokens, function tools → chat tools, text.format → response_format.
#pragma once

#include <optional>
#include <string>

#include "server/openai/api_error.h"
#include "server/openai/json.h"

namespace vllm::server {

struct ResponsesRequest {
  Json chat_body;  // a /v1/chat/completions body, its messages not yet set
  std::optional<std::string> instructions;
  Json input_messages = Json::array();  // the request's input, as chat messages
  std::optional<std::string> previous_response_id;
  std::optional<std::string> request_id;
  bool store = true;
  bool background = false;
  bool stream = false;
  bool include_logprobs = false;  // include has "message.output_text.logprobs"
  // The request's fields every response object repeats (instructions, tools, text, ...), with
  // OpenAI's defaults for those the request leaves out.
  Json echoed = Json::object();
};

std::optional<ApiError> ParseResponsesRequest(const Json& body, ResponsesRequest* request);

// The conversation the model is prompted with: the instructions as a system message, then the
// earlier conversation (of previous_response_id; an empty array when none), then the input.
Json ConversationMessages(const ResponsesRequest& request, const Json& earlier);

}  // namespace vllm::server
