// What one streamed chat chunk carries from the output parsers: new answer text, new reasoning
// text and tool-call deltas, shaped as the OpenAI SDK assembles them (per call index a first
// delta with the function name, then fragments of the JSON arguments text).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vllm::server {

struct ToolCallDelta {
  int index = 0;                    // which call (0, 1, ...) in this choice
  std::optional<std::string> name;  // set on the call's first delta only
  std::string arguments;            // the next fragment of the JSON arguments text (may be empty)
};

struct DeltaMessage {
  std::string content;
  std::string reasoning_content;
  std::vector<ToolCallDelta> tool_calls;

  bool empty() const { return content.empty() && reasoning_content.empty() && tool_calls.empty(); }
};

// Starts call `index` in `delta` with its function name.
inline void AddToolCallName(DeltaMessage* delta, int index, std::string name) {
  delta->tool_calls.push_back(ToolCallDelta{index, std::move(name), ""});
}

// Adds an arguments fragment of call `index`, merged into the delta's last entry when that is
// the same call.
inline void AddToolCallArguments(DeltaMessage* delta, int index, std::string_view fragment) {
  if (fragment.empty()) return;
  if (!delta->tool_calls.empty() && delta->tool_calls.back().index == index) {
    delta->tool_calls.back().arguments += fragment;
    return;
  }
  delta->tool_calls.push_back(ToolCallDelta{index, std::nullopt, std::string(fragment)});
}

}  // namespace vllm::server
