// The tool-call parsers CreateToolParser knows, one file each.
#pragma once

#include <memory>

#include "server/openai/output_parsers/tool_parser.h"

namespace vllm::server {

// Hermes 2 Pro, Qwen 2.5 and Qwen 3: <tool_call>{"name": ..., "arguments": ...}</tool_call>.
std::unique_ptr<ToolParser> MakeHermesToolParser();
// Llama 3.1 / 3.2 JSON calls: [<|python_tag|>]{"name": ..., "parameters": ...}; {...}.
std::unique_ptr<ToolParser> MakeLlama3JsonToolParser();
// Mistral: [TOOL_CALLS][{...}, ...] (before tokenizer v11) or [TOOL_CALLS]name[ARGS]{...}.
std::unique_ptr<ToolParser> MakeMistralToolParser();
// gpt-oss: harmony messages addressed to functions.NAME.
std::unique_ptr<ToolParser> MakeOpenAiToolParser();

}  // namespace vllm::server
