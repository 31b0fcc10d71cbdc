#include "server/openai/chat/protocol.h"

#include "chat_template/chat_template.h"
#include "server/openai/chat/messages.h"
#include "server/openai/generation_request.h"
#include "tokenizer/tokenizer.h"

namespace vllm::server {

std::optional<ApiError> RenderChatPrompt(const Tokenizer& tokenizer,
                                         const std::string& server_template,
                                         const RequestLimits& limits, const Json& body,
                                         ChatPrompt* prompt) {
  ChatMessages chat;
  if (auto error = ParseChatMessages(body, limits.max_prompt_bytes, &chat)) return error;
  prompt->last_message_role = chat.last_message_role;
  prompt->add_generation_prompt = chat.add_generation_prompt;
  prompt->last_message_content = chat.last_message_content;
  std::string source = server_template;
  std::optional<std::string> request_template;
  if (auto error = ReadField(body, "chat_template", GetString, &request_template)) return error;
  std::optional<Json> kwargs;
  if (auto error = ReadField(body, "chat_template_kwargs", GetObject, &kwargs)) return error;
  if (request_template || (kwargs && kwargs->contains("chat_template"))) {
    if (!limits.trust_request_chat_template) {
      return ApiError::BadRequest(
          "Chat template is passed with request, but --trust-request-chat-template is not set. "
          "Refused request with untrusted chat template.",
          "chat_template");
    }
    if (request_template) source = *request_template;
  }
  if (source.empty()) {
    return ApiError::BadRequest(
        "As of transformers v4.44, default chat template is no longer allowed, so you must "
        "provide a chat template if the tokenizer does not define one.",
        "chat_template");
  }
  auto chat_template = ChatTemplate::Parse(source);
  if (!chat_template.ok()) {
    return ApiError::BadRequest("Invalid chat template: " + chat_template.error(), "chat_template");
  }

  Json variables = Json::object();
  if (kwargs) {
    for (const auto& [key, value] : kwargs->items()) variables[key] = value;
  }
  variables["messages"] = std::move(chat.messages);
  variables["add_generation_prompt"] = chat.add_generation_prompt;
  variables["continue_final_message"] = chat.continue_final_message;
  variables["bos_token"] =
      tokenizer.bos_id() >= 0 ? std::string(tokenizer.TokenToPiece(tokenizer.bos_id())) : "";
  variables["eos_token"] =
      tokenizer.eos_id() >= 0 ? std::string(tokenizer.TokenToPiece(tokenizer.eos_id())) : "";
  for (const char* optional : {"tools", "documents"}) {
    if (auto it = body.find(optional); it != body.end() && !it->is_null()) {
      variables[optional] = *it;
    }
  }
  auto rendered = chat_template->Render(variables, limits.TemplateLimits());
  if (!rendered.ok()) return ApiError::BadRequest(rendered.error(), "messages");
  prompt->text = std::move(*rendered);
  if (chat.continue_final_message) {
    // The prompt ends where the final message's content ends, so the model continues it.
    const size_t at = prompt->last_message_content.empty()
                          ? std::string::npos
                          : prompt->text.rfind(prompt->last_message_content);
    if (at == std::string::npos) {
      return ApiError::BadRequest(
          "continue_final_message is set but the final message does not appear in the "
          "rendered chat",
          "continue_final_message");
    }
    prompt->text.resize(at + prompt->last_message_content.size());
  }
  return std::nullopt;
}

}  // namespace vllm::server
