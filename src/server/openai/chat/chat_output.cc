#include "server/openai/chat/chat_output.h"

#include "server/openai/output_parsers/json_normalizer.h"

namespace vllm::server {
namespace {

// As vLLM writes tool-call arguments: json.dumps(value, ensure_ascii=False).
std::string PythonJsonDumps(const Json& value) {
  std::string text;
  JsonNormalizer normalizer;
  normalizer.Feed(DumpJson(value), &text);
  normalizer.Finish(&text);
  return text;
}

Json ToolCall(std::string name, std::string arguments) {
  return {{"id", MakeToolCallId()},
          {"type", "function"},
          {"function", {{"name", std::move(name)}, {"arguments", std::move(arguments)}}}};
}

// Appends `text` to the delta's string field `key`.
void AppendText(Json* delta, const char* key, std::string_view text) {
  if (text.empty()) return;
  (*delta)[key] = delta->value(key, std::string()) + std::string(text);
}

void AppendToolCall(Json* delta, Json call) {
  if (!delta->contains("tool_calls")) (*delta)["tool_calls"] = Json::array();
  (*delta)["tool_calls"].push_back(std::move(call));
}

// A required-tools element {"name": ..., "parameters": {...}} as a tool call; arguments are
// re-serialized as vLLM does (json.dumps).
std::optional<Json> RequiredCall(const Json& element) {
  if (!element.is_object() || !element.contains("name") || !element["name"].is_string()) {
    return std::nullopt;
  }
  return ToolCall(element["name"].get<std::string>(),
                  PythonJsonDumps(element.value("parameters", Json::object())));
}

}  // namespace

AssistantMessage ParseAssistantMessage(const ChatOutputConfig& config, std::string_view text) {
  AssistantMessage message;
  std::optional<std::string> content = std::string(text);
  if (!config.reasoning_parser.empty()) {
    auto parser = CreateReasoningParser(config.reasoning_parser, config.reasoning_options);
    ReasoningParseResult split = parser->Parse(text);
    if (split.reasoning_content) message.reasoning_content = *split.reasoning_content;
    content = split.content;
  }
  const std::string answer = content.value_or("");
  switch (config.tools.choice) {
    case ToolChoiceKind::kNamed:
      message.content = "";
      message.tool_calls.push_back(ToolCall(config.tools.function_name, answer));
      return message;
    case ToolChoiceKind::kRequired: {
      auto calls = ParseJson(answer);
      if (calls.ok() && calls->is_array()) {
        for (const Json& element : *calls) {
          if (auto call = RequiredCall(element)) message.tool_calls.push_back(*call);
        }
      }
      if (!message.tool_calls.empty()) {
        message.content = "";
        return message;
      }
      break;  // a reply cut short (max_tokens) is returned as text
    }
    case ToolChoiceKind::kAuto:
      if (!config.tool_parser.empty()) {
        ToolParseResult parsed = CreateToolParser(config.tool_parser)->Parse(answer);
        if (!parsed.tool_calls.empty()) {
          for (ParsedToolCall& call : parsed.tool_calls) {
            message.tool_calls.push_back(ToolCall(std::move(call.name), std::move(call.arguments)));
          }
          message.auto_tools_called = true;
          message.content = parsed.content ? Json(*parsed.content) : Json(nullptr);
          return message;
        }
        if (parsed.content && !parsed.content->empty()) content = parsed.content;
      }
      break;
    case ToolChoiceKind::kNone:
      break;
  }
  message.content = content ? Json(*content) : Json(nullptr);
  return message;
}

ChatDeltaParser::ChatDeltaParser(const ChatOutputConfig& config) : config_(config) {
  if (!config.reasoning_parser.empty()) {
    reasoning_parser_ = CreateReasoningParser(config.reasoning_parser, config.reasoning_options);
  }
  if (config.tools.choice == ToolChoiceKind::kAuto && !config.tool_parser.empty()) {
    tool_parser_ = CreateToolParser(config.tool_parser);
  }
}

Json ChatDeltaParser::Next(std::string_view text, bool is_last) {
  Json delta = Json::object();
  if (reasoning_parser_ == nullptr) {
    AddAnswer(text, &delta);
  } else {
    DeltaMessage split = reasoning_parser_->ParseDelta(text);
    AppendText(&delta, "reasoning_content", split.reasoning_content);
    if (!split.content.empty()) AddAnswer(split.content, &delta);
  }
  if (!is_last) return delta;
  // What the parsers held back (a marker that may have been starting) comes out now.
  if (reasoning_parser_ != nullptr) {
    DeltaMessage rest = reasoning_parser_->Finish();
    AppendText(&delta, "reasoning_content", rest.reasoning_content);
    if (!rest.content.empty()) AddAnswer(rest.content, &delta);
  }
  if (tool_parser_ != nullptr) {
    DeltaMessage rest = tool_parser_->Finish();
    AppendText(&delta, "content", rest.content);
    AddToolCalls(rest, &delta);
  }
  return delta;
}

void ChatDeltaParser::AddAnswer(std::string_view content, Json* delta) {
  switch (config_.tools.choice) {
    case ToolChoiceKind::kNamed: {
      Json call = {{"index", 0}, {"function", {{"arguments", std::string(content)}}}};
      if (num_tool_calls_ == 0) {
        call["id"] = MakeToolCallId();
        call["type"] = "function";
        call["function"]["name"] = config_.tools.function_name;
        num_tool_calls_ = 1;
      }
      AppendToolCall(delta, std::move(call));
      return;
    }
    case ToolChoiceKind::kRequired:
      AddRequiredCalls(content, delta);
      return;
    case ToolChoiceKind::kAuto:
      if (tool_parser_ != nullptr) {
        DeltaMessage parsed = tool_parser_->ParseDelta(content);
        AppendText(delta, "content", parsed.content);
        AddToolCalls(parsed, delta);
        return;
      }
      break;
    case ToolChoiceKind::kNone:
      break;
  }
  // Plain replies carry "content" in every delta, an empty one included (as vLLM's do).
  (*delta)["content"] = delta->value("content", std::string()) + std::string(content);
}

void ChatDeltaParser::AddToolCalls(const DeltaMessage& message, Json* delta) {
  for (const ToolCallDelta& call : message.tool_calls) {
    Json entry = {{"index", call.index}, {"function", {{"arguments", call.arguments}}}};
    if (call.name) {
      entry["id"] = MakeToolCallId();
      entry["type"] = "function";
      entry["function"]["name"] = *call.name;
      num_tool_calls_ = std::max(num_tool_calls_, call.index + 1);
    }
    AppendToolCall(delta, std::move(entry));
  }
}

void ChatDeltaParser::AddRequiredCalls(std::string_view content, Json* delta) {
  required_text_ += content;
  // Scans the array [ {...}, {...} ] for the end of each top-level object.
  for (; required_scanned_ < required_text_.size(); ++required_scanned_) {
    const char c = required_text_[required_scanned_];
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      continue;
    }
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      if (++depth_ == 2 && c == '{') object_start_ = required_scanned_;
    } else if (c == '}' || c == ']') {
      if (depth_-- != 2 || c != '}') continue;
      auto element =
          ParseJsonObject(std::string_view(required_text_)
                              .substr(object_start_, required_scanned_ + 1 - object_start_));
      std::optional<Json> call = element.ok() ? RequiredCall(*element) : std::nullopt;
      if (!call) continue;
      Json entry = {{"index", num_tool_calls_++},
                    {"id", (*call)["id"]},
                    {"type", "function"},
                    {"function", (*call)["function"]}};
      AppendToolCall(delta, std::move(entry));
    }
  }
}

}  // namespace vllm::server
