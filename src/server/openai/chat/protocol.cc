#include "server/openai/chat/protocol.h"

#include "tokenizer/chat_template/chat_template.h"
#include "tokenizer/tokenizer.h"

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

std::optional<ApiError> ReadBool(const Json& body, const char* name, bool* value) {
  auto read = GetBool(body, name);
  if (!read.ok()) return ApiError::BadRequest(read.error(), name);
  if (read->has_value()) *value = **read;
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> RenderChatPrompt(const ServingContext& context, const Json& body,
                                         ChatPrompt* prompt) {
  auto messages_field = body.find("messages");
  if (messages_field == body.end() || !messages_field->is_array()) {
    return ApiError::BadRequest("messages: Field required (a list of messages)", "messages");
  }
  Json messages = Json::array();
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
    prompt->last_message_role = message["role"].get<std::string>();
    prompt->last_message_content = text;
    messages.push_back(std::move(normalized));
  }
  bool add_generation_prompt = true;
  bool continue_final_message = false;
  if (auto error = ReadBool(body, "add_generation_prompt", &add_generation_prompt)) return error;
  if (auto error = ReadBool(body, "continue_final_message", &continue_final_message)) {
    return error;
  }
  if (add_generation_prompt && continue_final_message) {
    return ApiError::BadRequest(
        "Cannot set both `continue_final_message` and `add_generation_prompt` to True.",
        "continue_final_message");
  }

  std::string source = context.chat_template;
  if (auto request_template = GetString(body, "chat_template"); !request_template.ok()) {
    return ApiError::BadRequest(request_template.error(), "chat_template");
  } else if (request_template->has_value()) {
    source = **request_template;
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

  const Tokenizer& tokenizer = context.engine.tokenizer();
  Json variables = Json::object();
  if (auto kwargs = GetObject(body, "chat_template_kwargs"); !kwargs.ok()) {
    return ApiError::BadRequest(kwargs.error(), "chat_template_kwargs");
  } else if (kwargs->has_value()) {
    for (const auto& [key, value] : (*kwargs)->items()) variables[key] = value;
  }
  variables["messages"] = std::move(messages);
  variables["add_generation_prompt"] = add_generation_prompt;
  variables["continue_final_message"] = continue_final_message;
  variables["bos_token"] =
      tokenizer.bos_id() >= 0 ? std::string(tokenizer.TokenToPiece(tokenizer.bos_id())) : "";
  variables["eos_token"] =
      tokenizer.eos_id() >= 0 ? std::string(tokenizer.TokenToPiece(tokenizer.eos_id())) : "";
  for (const char* optional : {"tools", "documents"}) {
    if (auto it = body.find(optional); it != body.end() && !it->is_null()) {
      variables[optional] = *it;
    }
  }
  auto rendered = chat_template->Render(variables);
  if (!rendered.ok()) return ApiError::BadRequest(rendered.error(), "messages");
  prompt->text = std::move(*rendered);
  if (continue_final_message) {
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
