// Tool-call parsers (vLLM's --tool-call-parser): find the tool calls a model wrote in its output
// text, for the whole output (message.tool_calls) and while it streams (delta.tool_calls).
//
// The handler creates one parser per choice of a request. Streaming feeds each new piece of text
// to ParseDelta and calls Finish when the output ends; concatenating the content deltas gives the
// content Parse returns for the whole output, and concatenating one call's argument fragments
// gives its arguments, for every well-formed output however it is split. Where a call turns out
// malformed after its name was streamed, the two differ (as in vLLM); each parser says how.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/openai/output_parsers/delta_message.h"

namespace vllm::server {

struct ParsedToolCall {
  std::string name;
  std::string arguments;  // JSON text, normalized as vLLM writes it for this parser
};

struct ToolParseResult {
  std::vector<ParsedToolCall> tool_calls;  // empty: no call found
  std::optional<std::string> content;  // text outside the calls; nullopt where vLLM returns null
};

class ToolParser {
 public:
  virtual ~ToolParser() = default;
  // The whole output.
  virtual ToolParseResult Parse(std::string_view output) const = 0;
  // Streaming: the next text of the output. Text that may still be the start of a marker is
  // held back until a later delta (or Finish) shows what it is.
  virtual DeltaMessage ParseDelta(std::string_view delta_text) = 0;
  // Streaming: the output ended; flushes what was held back.
  virtual DeltaMessage Finish() = 0;
};

struct ToolParserInfo {
  // The call markers are special tokens: the handler decodes with skip_special_tokens=false.
  bool needs_special_tokens;
};

// nullptr: unknown name.
std::unique_ptr<ToolParser> CreateToolParser(std::string_view name);
std::optional<ToolParserInfo> ToolParserInfoOf(std::string_view name);
// The known names, for --help and error messages.
std::vector<std::string> ToolParserNames();

}  // namespace vllm::server
