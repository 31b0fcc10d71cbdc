#include "server/openai/responses/input_items.h"

#include <string>

namespace vllm::server {
namespace {

constexpr char kParam[] = "input";

ApiError BadInput(const std::string& message) { return ApiError::BadRequest(message, kParam); }

// A message's content: a string, or a list of text parts (input_text, output_text) joined by
// newlines as the chat route joins its text parts.
std::optional<ApiError> ContentText(const Json& content, std::string* text) {
  if (content.is_string()) {
    *text = content.get<std::string>();
    return std::nullopt;
  }
  if (!content.is_array()) {
    return BadInput("input: a message's content must be a string or a list of content parts");
  }
  for (const Json& part : content) {
    const std::string type = part.is_object() ? part.value("type", "") : "";
    if (type != "input_text" && type != "output_text") {
      return BadInput("input: content part type '" + type +
                      "' is not supported (input_text and output_text are)");
    }
    if (!part.contains("text") || !part["text"].is_string()) {
      return BadInput("input: a " + type + " part needs a string text");
    }
    if (!text->empty()) *text += "\n";
    *text += part["text"].get<std::string>();
  }
  return std::nullopt;
}

std::optional<ApiError> AppendMessage(const Json& item, Json* messages) {
  const std::string role = item.value("role", "");
  if (role != "user" && role != "system" && role != "developer" && role != "assistant") {
    return BadInput("input: a message's role must be user, system, developer or assistant");
  }
  std::string text;
  if (auto error = ContentText(item.value("content", Json(nullptr)), &text)) return error;
  messages->push_back({{"role", role == "developer" ? "system" : role}, {"content", text}});
  return std::nullopt;
}

// A string field every item of its type needs.
std::optional<ApiError> RequiredString(const Json& item, const char* type, const char* name,
                                       std::string* out) {
  auto it = item.find(name);
  if (it == item.end() || !it->is_string()) {
    return BadInput(std::string("input: a ") + type + " item needs a string " + name);
  }
  *out = it->get<std::string>();
  return std::nullopt;
}

std::optional<ApiError> AppendFunctionCall(const Json& item, Json* messages) {
  std::string call_id, name, arguments;
  for (auto [field, out] :
       {std::pair{"call_id", &call_id}, {"name", &name}, {"arguments", &arguments}}) {
    if (auto error = RequiredString(item, "function_call", field, out)) return error;
  }
  Json call = {{"id", call_id},
               {"type", "function"},
               {"function", {{"name", name}, {"arguments", arguments}}}};
  // Parallel calls: one assistant message holds them all.
  if (!messages->empty() && messages->back()["role"] == "assistant" &&
      messages->back().contains("tool_calls")) {
    messages->back()["tool_calls"].push_back(std::move(call));
    return std::nullopt;
  }
  messages->push_back(
      {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", Json::array({call})}});
  return std::nullopt;
}

std::optional<ApiError> AppendFunctionCallOutput(const Json& item, Json* messages) {
  std::string call_id;
  if (auto error = RequiredString(item, "function_call_output", "call_id", &call_id)) return error;
  auto output = item.find("output");
  if (output == item.end()) return BadInput("input: a function_call_output item needs its output");
  std::string text;
  if (auto error = ContentText(*output, &text)) return error;
  messages->push_back({{"role", "tool"}, {"tool_call_id", call_id}, {"content", text}});
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> AppendInputMessages(const Json& input, Json* messages) {
  if (input.is_string()) {
    messages->push_back({{"role", "user"}, {"content", input}});
    return std::nullopt;
  }
  if (!input.is_array()) return BadInput("input: Input should be a valid string or list");
  for (const Json& item : input) {
    if (!item.is_object()) return BadInput("input: each item must be an object");
    auto type_field = item.find("type");
    if (type_field != item.end() && !type_field->is_string()) {
      return BadInput("input: an item's type must be a string");
    }
    // A message may leave out its type (EasyInputMessage).
    const std::string type = type_field == item.end() ? "message" : type_field->get<std::string>();
    std::optional<ApiError> error;
    if (type == "message") {
      error = AppendMessage(item, messages);
    } else if (type == "function_call") {
      error = AppendFunctionCall(item, messages);
    } else if (type == "function_call_output") {
      error = AppendFunctionCallOutput(item, messages);
    } else if (type != "reasoning") {
      error = BadInput("input: item type '" + type + "' is not supported");
    }
    if (error) return error;
  }
  return std::nullopt;
}

void AppendOutputMessages(const Json& output, Json* messages) {
  for (const Json& item : output) {
    const std::string type = item.value("type", "");
    if (type == "message") {
      std::string text;
      if (!ContentText(item.value("content", Json::array()), &text)) {
        messages->push_back({{"role", "assistant"}, {"content", text}});
      }
    } else if (type == "function_call") {
      AppendFunctionCall(item, messages);  // items this server made: never an error
    }
  }
}

}  // namespace vllm::server
