// Reasoning parsers (vLLM's --reasoning-parser): separate the model's thinking
// (message.reasoning_content) from its answer (content), for the whole output and while it
// streams. The handler runs the reasoning parser first and gives its content to the tool parser,
// as vLLM does.
//
// Streaming feeds each new piece of text to ParseDelta and calls Finish when the output ends;
// the concatenated reasoning and content deltas equal what Parse returns for the whole output
// (an empty string where Parse returns null), however the output is split.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/openai/output_parsers/delta_message.h"

namespace vllm::server {

struct ReasoningParseResult {
  std::optional<std::string> reasoning_content;
  std::optional<std::string> content;
};

class ReasoningParser {
 public:
  virtual ~ReasoningParser() = default;
  virtual ReasoningParseResult Parse(std::string_view output) const = 0;
  // Fills content and reasoning_content with the next text of each.
  virtual DeltaMessage ParseDelta(std::string_view delta_text) = 0;
  virtual DeltaMessage Finish() = 0;
  // The text after which the answer starts (e.g. "</think>"): the engine applies a structured
  // output constraint only after it. Empty: the answer starts at once (thinking is off).
  virtual std::string_view reasoning_end() const = 0;
};

struct ReasoningParserOptions {
  bool thinking_enabled = true;  // chat_template_kwargs enable_thinking / thinking
};

// nullptr: unknown name.
std::unique_ptr<ReasoningParser> CreateReasoningParser(std::string_view name,
                                                       const ReasoningParserOptions& options = {});
// The known names, for --help and error messages.
std::vector<std::string> ReasoningParserNames();

}  // namespace vllm::server
