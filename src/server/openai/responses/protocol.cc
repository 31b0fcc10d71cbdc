#include "server/openai/responses/protocol.h"

#include "server/openai/responses/input_items.h"

namespace vllm::server {
namespace {

// Fields of a chat body that a responses request must not set under their chat names: they are
// made here from the responses fields, or have no meaning (one reply, no echo).
constexpr const char* kChatOnlyFields[] = {"messages",
                                           "n",
                                           "max_tokens",
                                           "max_completion_tokens",
                                           "response_format",
                                           "logprobs",
                                           "stream_options",
                                           "echo",
                                           "functions",
                                           "function_call",
                                           "tools",
                                           "tool_choice",
                                           "input",
                                           "instructions",
                                           "text",
                                           "max_output_tokens",
                                           "top_logprobs"};

// tools: OpenAI's flat function tools {type, name, description, parameters, strict} as chat's.
// The built-in tools (web_search_preview, file_search, code_interpreter, mcp, computer_use_preview,
// image_generation, local_shell, custom...) are a 400 naming the type: vLLM runs them only for
// gpt-oss models through Harmony and a tool server, and refuses every tool otherwise.
std::optional<ApiError> ConvertTools(const Json& tools, Json* chat_tools) {
  if (!tools.is_array())
    return ApiError::BadRequest("tools: Input should be a valid list", "tools");
  for (const Json& tool : tools) {
    if (!tool.is_object() || !tool.contains("type") || !tool["type"].is_string()) {
      return ApiError::BadRequest("tools: each tool needs a string type", "tools");
    }
    const std::string type = tool["type"];
    if (type != "function") {
      return ApiError::BadRequest("tools: tool type '" + type +
                                      "' is not supported: built-in tools need Harmony (a gpt-oss "
                                      "model) and a tool server; only function tools are served",
                                  "tools");
    }
    if (!tool.contains("name") || !tool["name"].is_string()) {
      return ApiError::BadRequest("tools: a function tool needs a string name", "tools");
    }
    Json function = {{"name", tool["name"]}};
    for (const char* field : {"description", "parameters", "strict"}) {
      if (IsPresent(tool, field)) function[field] = tool[field];
    }
    chat_tools->push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return std::nullopt;
}

// tool_choice: "auto" / "none" / "required", or {"type": "function", "name"}. A built-in tool's
// choice ({"type": "file_search"}, mcp, allowed_tools...) is a 400 naming its type.
std::optional<ApiError> ConvertToolChoice(const Json& choice, Json* chat_choice) {
  if (choice == "auto" || choice == "none" || choice == "required") {
    *chat_choice = choice;
    return std::nullopt;
  }
  const Json* type = choice.is_object() && choice.contains("type") ? &choice["type"] : nullptr;
  if (type != nullptr && *type == "function" && choice.contains("name") &&
      choice["name"].is_string()) {
    *chat_choice = {{"type", "function"}, {"function", {{"name", choice["name"]}}}};
    return std::nullopt;
  }
  if (type != nullptr && type->is_string() && *type != "function") {
    return ApiError::BadRequest("tool_choice: type '" + type->get<std::string>() +
                                    "' is not supported: only function tools are served",
                                "tool_choice");
  }
  return ApiError::BadRequest(
      "tool_choice: must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", "
      "\"name\": ...}",
      "tool_choice");
}

// text.format: text (nothing to do), json_object, or json_schema {name, schema, strict}.
std::optional<ApiError> ConvertTextFormat(const Json& text, Json* chat_body) {
  if (!text.is_object()) return ApiError::BadRequest("text: Input should be an object", "text");
  auto format = text.find("format");
  if (format == text.end() || format->is_null()) return std::nullopt;
  const std::string type = format->is_object() ? format->value("type", "") : "";
  if (type == "text") return std::nullopt;
  if (type == "json_object") {
    (*chat_body)["response_format"] = {{"type", "json_object"}};
    return std::nullopt;
  }
  if (type == "json_schema") {
    if (!format->contains("schema") || !(*format)["schema"].is_object()) {
      return ApiError::BadRequest("text.format: a json_schema format needs its schema object",
                                  "text");
    }
    Json json_schema = {{"name", format->value("name", "response")},
                        {"schema", (*format)["schema"]}};
    if (IsPresent(*format, "strict")) json_schema["strict"] = (*format)["strict"];
    (*chat_body)["response_format"] = {{"type", "json_schema"},
                                       {"json_schema", std::move(json_schema)}};
    return std::nullopt;
  }
  return ApiError::BadRequest(
      "text.format: type must be \"text\", \"json_object\" or \"json_schema\"", "text");
}

#define VLLM_READ(getter, name, out) \
  if (auto error = ReadField(body, name, getter, out); error) return error

// The flags and ids that decide how the request runs.
std::optional<ApiError> ReadControlFields(const Json& body, ResponsesRequest* request) {
  VLLM_READ(GetBool, "store", &request->store);
  VLLM_READ(GetBool, "background", &request->background);
  VLLM_READ(GetBool, "stream", &request->stream);
  VLLM_READ(GetString, "previous_response_id", &request->previous_response_id);
  VLLM_READ(GetString, "request_id", &request->request_id);
  VLLM_READ(GetString, "instructions", &request->instructions);
  if (request->background && !request->store) {
    return ApiError::BadRequest("background can only be used when `store` is true", "background");
  }
  auto include = body.find("include");
  if (include != body.end() && !include->is_null()) {
    if (!include->is_array())
      return ApiError::BadRequest("include: Input should be a list", "include");
    for (const Json& entry : *include) {
      if (entry == "message.output_text.logprobs") request->include_logprobs = true;
    }
  }
  return std::nullopt;
}

// The chat body: the request's own fields (sampling parameters and vLLM's extras) less those
// that differ between the two routes, then the converted ones.
std::optional<ApiError> MakeChatBody(const Json& body, const ResponsesRequest& request,
                                     Json* chat_body) {
  *chat_body = body;
  for (const char* field : kChatOnlyFields) chat_body->erase(field);
  if (auto it = body.find("max_output_tokens"); it != body.end() && !it->is_null()) {
    if (!it->is_number_integer()) {
      return ApiError::BadRequest("max_output_tokens: Input should be a valid integer",
                                  "max_output_tokens");
    }
    if (it->get<int64_t>() < 1) {
      return ApiError::BadRequest(
          "max_output_tokens must be at least 1, got " + std::to_string(it->get<int64_t>()) + ".",
          "max_output_tokens");
    }
    (*chat_body)["max_tokens"] = *it;
  }
  if (request.include_logprobs) {
    (*chat_body)["logprobs"] = true;
    (*chat_body)["top_logprobs"] = body.value("top_logprobs", Json(0));
  }
  if (auto it = body.find("tools"); it != body.end() && !it->is_null()) {
    Json tools = Json::array();
    if (auto error = ConvertTools(*it, &tools)) return error;
    if (!tools.empty()) (*chat_body)["tools"] = std::move(tools);
  }
  if (auto it = body.find("tool_choice"); it != body.end() && !it->is_null()) {
    Json choice;
    if (auto error = ConvertToolChoice(*it, &choice)) return error;
    if (chat_body->contains("tools") || choice != "auto") (*chat_body)["tool_choice"] = choice;
  }
  if (auto it = body.find("text"); it != body.end() && !it->is_null()) {
    if (auto error = ConvertTextFormat(*it, chat_body)) return error;
  }
  return std::nullopt;
}

#undef VLLM_READ

// A field of the request as the response repeats it, or its default.
Json EchoOf(const Json& body, const char* name, Json fallback) {
  auto it = body.find(name);
  return it == body.end() || it->is_null() ? fallback : *it;
}

Json EchoedFields(const Json& body, const ResponsesRequest& request) {
  return {
      {"background", request.background},
      {"instructions", request.instructions ? Json(*request.instructions) : Json(nullptr)},
      {"max_output_tokens", EchoOf(body, "max_output_tokens", nullptr)},
      {"max_tool_calls", EchoOf(body, "max_tool_calls", nullptr)},
      {"metadata", EchoOf(body, "metadata", Json::object())},
      {"parallel_tool_calls", EchoOf(body, "parallel_tool_calls", true)},
      {"previous_response_id", EchoOf(body, "previous_response_id", nullptr)},
      {"reasoning", EchoOf(body, "reasoning", nullptr)},
      {"service_tier", EchoOf(body, "service_tier", "auto")},
      {"store", request.store},
      {"temperature", EchoOf(body, "temperature", 1.0)},
      {"text", EchoOf(body, "text", {{"format", {{"type", "text"}}}})},
      {"tool_choice", EchoOf(body, "tool_choice", "auto")},
      {"tools", EchoOf(body, "tools", Json::array())},
      {"top_logprobs", EchoOf(body, "top_logprobs", 0)},
      {"top_p", EchoOf(body, "top_p", 1.0)},
      {"truncation", EchoOf(body, "truncation", "disabled")},
      {"user", EchoOf(body, "user", nullptr)},
  };
}

}  // namespace

std::optional<ApiError> ParseResponsesRequest(const Json& body, ResponsesRequest* request) {
  auto input = body.find("input");
  if (input == body.end() || input->is_null()) {
    return ApiError::BadRequest("input: Field required", "input");
  }
  if (auto error = ReadControlFields(body, request)) return error;
  if (auto error = AppendInputMessages(*input, &request->input_messages)) return error;
  if (auto error = MakeChatBody(body, *request, &request->chat_body)) return error;
  request->echoed = EchoedFields(body, *request);
  return std::nullopt;
}

Json ConversationMessages(const ResponsesRequest& request, const Json& earlier) {
  Json messages = Json::array();
  if (request.instructions) {
    messages.push_back({{"role", "system"}, {"content", *request.instructions}});
  }
  for (const Json& message : earlier) messages.push_back(message);
  for (const Json& message : request.input_messages) messages.push_back(message);
  return messages;
}

}  // namespace vllm::server
