// The tool-call parser registry: names, what each needs from the detokenizer, constructors.
#include "server/openai/output_parsers/tool_parser.h"

#include "server/openai/output_parsers/tool_parsers.h"

namespace vllm::server {
namespace {

struct RegisteredToolParser {
  std::string_view name;
  ToolParserInfo info;
  std::unique_ptr<ToolParser> (*make)();
};

// vLLM decodes with skip_special_tokens=false for hermes and mistral (their markers are special
// tokens in some vocabularies) and parses gpt-oss's harmony tokens; llama3_json works either way
// (<|python_tag|> is optional).
constexpr RegisteredToolParser kToolParsers[] = {
    {"hermes", {.needs_special_tokens = true}, MakeHermesToolParser},
    {"llama3_json", {.needs_special_tokens = false}, MakeLlama3JsonToolParser},
    {"mistral", {.needs_special_tokens = true}, MakeMistralToolParser},
    {"openai", {.needs_special_tokens = true}, MakeOpenAiToolParser},
};

const RegisteredToolParser* Find(std::string_view name) {
  for (const RegisteredToolParser& parser : kToolParsers) {
    if (parser.name == name) return &parser;
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<ToolParser> CreateToolParser(std::string_view name) {
  const RegisteredToolParser* parser = Find(name);
  return parser == nullptr ? nullptr : parser->make();
}

std::optional<ToolParserInfo> ToolParserInfoOf(std::string_view name) {
  const RegisteredToolParser* parser = Find(name);
  if (parser == nullptr) return std::nullopt;
  return parser->info;
}

std::vector<std::string> ToolParserNames() {
  std::vector<std::string> names;
  for (const RegisteredToolParser& parser : kToolParsers) names.emplace_back(parser.name);
  return names;
}

}  // namespace vllm::server
