// The reasoning parsers CreateReasoningParser knows.
#pragma once

#include <memory>

#include "server/openai/output_parsers/reasoning_parser.h"

namespace vllm::server {

// <think>REASONING</think>ANSWER, the <think> optional (DeepSeek R1 and Qwen 3.5 templates put
// it in the prompt). `thinking_enabled` false: everything is content.
std::unique_ptr<ReasoningParser> MakeThinkReasoningParser(bool thinking_enabled);
// gpt-oss: the harmony analysis channel is the reasoning.
std::unique_ptr<ReasoningParser> MakeOpenAiReasoningParser();

}  // namespace vllm::server
