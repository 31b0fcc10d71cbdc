// The messages of a chat request, checked and normalized for the chat template: each message's
// content becomes one string (text parts joined by newlines, as vLLM does).
#pragma once

#include <optional>
#include <string>

#include "server/openai/api_error.h"
#include "server/openai/json.h"

namespace vllm::server {

struct ChatMessages {
  Json messages = Json::array();  // as given, but with string content
  std::string last_message_role;  // for echo and continue_final_message
  std::string last_message_content;
  bool add_generation_prompt = true;
  bool continue_final_message = false;
};

// Reads "messages", "add_generation_prompt" and "continue_final_message"; the content of all
// messages together may have at most `max_content_bytes`.
std::optional<ApiError> ParseChatMessages(const Json& body, size_t max_content_bytes,
                                          ChatMessages* messages);

}  // namespace vllm::server
