// The reasoning parser registry.
#include "server/openai/output_parsers/reasoning_parser.h"

#include <iterator>

#include "server/openai/output_parsers/reasoning_parsers.h"

namespace vllm::server {
namespace {

constexpr std::string_view kNames[] = {"deepseek_r1", "openai", "qwen3"};

}  // namespace

std::unique_ptr<ReasoningParser> CreateReasoningParser(std::string_view name,
                                                       const ReasoningParserOptions& options) {
  // vLLM's DeepSeek R1 parser has no switch: its template always thinks.
  if (name == "deepseek_r1") return MakeThinkReasoningParser(/*thinking_enabled=*/true);
  if (name == "qwen3") return MakeThinkReasoningParser(options.thinking_enabled);
  if (name == "openai") return MakeOpenAiReasoningParser();
  return nullptr;
}

std::vector<std::string> ReasoningParserNames() {
  return std::vector<std::string>(std::begin(kNames), std::end(kNames));
}

}  // namespace vllm::server
