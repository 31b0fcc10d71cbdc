// The reasoning parser registry: names and constructors, one row each (as tool_parser.cc's).
#include "server/openai/output_parsers/reasoning_parser.h"

#include "server/openai/output_parsers/reasoning_parsers.h"

namespace vllm::server {
namespace {

struct RegisteredReasoningParser {
  std::string_view name;
  std::unique_ptr<ReasoningParser> (*make)(const ReasoningParserOptions& options);
};

constexpr RegisteredReasoningParser kReasoningParsers[] = {
    // vLLM's DeepSeek R1 parser has no switch: its template always thinks.
    {"deepseek_r1", [](const ReasoningParserOptions&) { return MakeThinkReasoningParser(true); }},
    {"openai", [](const ReasoningParserOptions&) { return MakeOpenAiReasoningParser(); }},
    {"qwen3",
     [](const ReasoningParserOptions& options) {
       return MakeThinkReasoningParser(options.thinking_enabled);
     }},
};

}  // namespace

std::unique_ptr<ReasoningParser> CreateReasoningParser(std::string_view name,
                                                       const ReasoningParserOptions& options) {
  for (const RegisteredReasoningParser& parser : kReasoningParsers) {
    if (parser.name == name) return parser.make(options);
  }
  return nullptr;
}

std::vector<std::string> ReasoningParserNames() {
  std::vector<std::string> names;
  for (const RegisteredReasoningParser& parser : kReasoningParsers) names.emplace_back(parser.name);
  return names;
}

}  // namespace vllm::server
