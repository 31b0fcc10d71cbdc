// A chat request's tools: `tools`, `tool_choice` and `parallel_tool_calls`, checked as vLLM
// checks them. `required` and a named function constrain generation to the tools' parameter
// schemas (vLLM's structured-output way of guaranteeing valid arguments).
#pragma once

#include <optional>
#include <string>

#include "server/openai/api_error.h"
#include "server/openai/json.h"
#include "vllm/sampling_params.h"

namespace vllm::server {

enum class ToolChoiceKind { kNone, kAuto, kRequired, kNamed };

struct ChatTools {
  ToolChoiceKind choice = ToolChoiceKind::kNone;
  std::string function_name;  // kNamed: the function the reply calls
  bool parallel_tool_calls = true;
};

// Reads the fields; `auto_tool_choice` says whether the server runs a tool parser
// (--enable-auto-tool-choice with --tool-call-parser). For `required` and a named function it
// sets params->structured_outputs (a request that also sets a constraint of its own gets a 400).
std::optional<ApiError> ParseChatTools(const Json& body, bool auto_tool_choice,
                                       SamplingParams* params, ChatTools* tools);

// vLLM's tool call ids: "chatcmpl-tool-" and 32 random hex digits.
std::string MakeToolCallId();

}  // namespace vllm::server
