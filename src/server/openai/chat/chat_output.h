// How a chat reply's text becomes the assistant message, as vLLM's chat serving does: the
// reasoning parser splits off the thinking, then the tool calls are read from the answer — by
// the tool parser (tool_choice auto), or from the constrained output (required: a JSON array of
// {name, parameters}; a named function: its arguments). Whole replies and streamed deltas.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "server/openai/chat/tools.h"
#include "server/openai/json.h"
#include "server/openai/output_parsers/reasoning_parser.h"
#include "server/openai/output_parsers/tool_parser.h"

namespace vllm::server {

struct ChatOutputConfig {
  std::string reasoning_parser;  // --reasoning-parser; empty: none
  std::string tool_parser;       // --tool-call-parser with --enable-auto-tool-choice; or empty
  ChatTools tools;
  ReasoningParserOptions reasoning_options;
};

struct AssistantMessage {
  Json content = nullptr;            // a string, or null
  Json reasoning_content = nullptr;  // a string, or null
  Json tool_calls = Json::array();   // [{id, type, function: {name, arguments}}]
  bool auto_tools_called = false;    // the finish_reason becomes "tool_calls"
};

AssistantMessage ParseAssistantMessage(const ChatOutputConfig& config, std::string_view text);

// One choice's streamed reply: each piece of generated text in, the delta fields to send out.
class ChatDeltaParser {
 public:
  explicit ChatDeltaParser(const ChatOutputConfig& config);

  // The next delta's fields ("content", "reasoning_content", "tool_calls"); empty when the text
  // is held back (a marker may be starting) or belongs to nothing sent yet. With is_last (the
  // reply ended), what was held back comes out too.
  Json Next(std::string_view text, bool is_last);
  bool auto_tools_called() const { return num_tool_calls_ > 0 && tool_parser_ != nullptr; }

 private:
  // Turns the answer part of a delta (after reasoning) into tool-call or content fields.
  void AddAnswer(std::string_view content, Json* delta);
  void AddToolCalls(const DeltaMessage& message, Json* delta);
  // tool_choice required: emits each call once its {name, parameters} object is complete.
  void AddRequiredCalls(std::string_view content, Json* delta);

  const ChatOutputConfig& config_;
  std::unique_ptr<ReasoningParser> reasoning_parser_;
  std::unique_ptr<ToolParser> tool_parser_;  // auto tool choice only
  int num_tool_calls_ = 0;                   // calls begun so far
  // tool_choice required: the output so far and the scan state of its JSON array.
  std::string required_text_;
  size_t required_scanned_ = 0;
  size_t object_start_ = 0;
  int depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;
};

}  // namespace vllm::server
