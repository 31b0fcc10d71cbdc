// POST /v1/chat/completions: messages → the chat template's variables → the prompt text.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "server/openai/api_error.h"
#include "server/openai/json.h"
#include "server/request_limits.h"
#include "tokenizer/tokenizer.h"

namespace vllm::server {

struct ChatPrompt {
  std::string text;                   // the rendered prompt
  std::string last_message_role;      // for echo
  bool add_generation_prompt = true;  // the reply's role: --response-role, else the last message's
  std::string last_message_content;
};

// Checks the messages, renders the template (the request's chat_template when `limits` trust
// it, else `server_template`)
// with add_generation_prompt / continue_final_message / tools / documents /
// chat_template_kwargs, and returns the prompt. Template errors (raise_exception) are 400s.
std::optional<ApiError> RenderChatPrompt(const Tokenizer& tokenizer,
                                         const std::string& server_template,
                                         const RequestLimits& limits, const Json& body,
                                         ChatPrompt* prompt);

}  // namespace vllm::server
