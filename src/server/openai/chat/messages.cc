#include "server/openai/chat/messages.h"

#include "server/openai/generation_request.h"

namespace vllm::server {
namespace {

// A message's content as one string: text parts are joined with newlines, as vLLM does for
// templates that take string content.
std::optional<ApiError> ContentText(const Json& content, std::string* text) {
  if (content.is_null()) return std::nullopt;
  if (content.is_string()) {
    *text = content.get<std::string>();
    return std::nullopt;
  }
  if (!content.is_array()) {
    return ApiError::BadRequest("messages: content should be a string or a list of parts",
                                "messages");
  }
  for (const Json& part : content) {
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
      return ApiError::BadRequest("messages: each content part needs a type", "messages");
    }
    const std::string type = part["type"].get<std::string>();
    if (type != "text") {
      return ApiError::BadRequest("Unsupported content part type: " + type, "messages");
    }
    if (!part.contains("text") || !part["text"].is_string()) {
      return ApiError::BadRequest("messages: a text part needs its text", "messages");
    }
    if (!text->empty()) *text += "\n";
    *text += part["text"].get<std::string>();
  }
  return std::nullopt;
}

// An assistant message's tool calls carry their arguments as JSON text; templates read them as
// objects, so vLLM parses them first (text that is not a JSON object stays as it is).
void ParseToolCallArguments(Json* message) {
  auto tool_calls = message->find("tool_calls");
  if (tool_calls == message->end() || !tool_calls->is_array()) return;
  for (Json& call : *tool_calls) {
    if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) continue;
    Json& function = call["function"];
    if (!function.contains("arguments") || !function["arguments"].is_string()) continue;
    auto arguments = ParseJsonObject(function["arguments"].get<std::string>());
    if (arguments.ok()) function["arguments"] = std::move(*arguments);
  }
}

}  // namespace

std::optional<ApiError> ParseChatMessages(const Json& body, size_t max_content_bytes,
                                          ChatMessages* messages) {
  auto messages_field = body.find("messages");
  if (messages_field == body.end() || !messages_field->is_array()) {
    return ApiError::BadRequest("messages: Field required (a list of messages)", "messages");
  }
  size_t num_content_bytes = 0;
  for (const Json& message : *messages_field) {
    if (!message.is_object() || !message.contains("role") || !message["role"].is_string()) {
      return ApiError::BadRequest("messages: each message needs a string role", "messages");
    }
    Json normalized = message;
    std::string text;
    if (message.contains("content")) {
      if (auto error = ContentText(message["content"], &text)) return error;
      if (!message["content"].is_null()) normalized["content"] = text;
    }
    if (message["role"] == "assistant") ParseToolCallArguments(&normalized);
    num_content_bytes += text.size();
    if (num_content_bytes > max_content_bytes) {
      return PromptTooLarge(num_content_bytes, max_content_bytes, "messages");
    }
    messages->last_message_role = message["role"].get<std::string>();
    messages->last_message_content = text;
    messages->messages.push_back(std::move(normalized));
  }
  if (auto error =
          ReadField(body, "add_generation_prompt", GetBool, &messages->add_generation_prompt))
    return error;
  if (auto error =
          ReadField(body, "continue_final_message", GetBool, &messages->continue_final_message)) {
    return error;
  }
  if (messages->add_generation_prompt && messages->continue_final_message) {
    return ApiError::BadRequest(
        "Cannot set both `continue_final_message` and `add_generation_prompt` to True.",
        "continue_final_message");
  }
  return std::nullopt;
}

}  // namespace vllm::server
