// The pattern of a Split pre-tokenizer or a Replace normalizer / decoder: {"String": "..."} is
// matched literally, {"Regex": "..."} as a Unicode regex (PCRE2).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/expected.h"
#include "tokenizer/hf/json_fields.h"
#include "tokenizer/regex_splitter.h"

namespace vllm::hf {

class Pattern {
 public:
  static Expected<Pattern> Parse(const Json& json, std::string_view context);
  static Pattern Literal(std::string text);
  // A Replace step's {"pattern": ..., "content": "..."} (normalizer or decoder).
  static Expected<std::pair<Pattern, std::string>> ParseReplace(const Json& json,
                                                                std::string_view context);

  // The non-empty matches in `text`, left to right, without overlap, as [begin, end).
  std::vector<std::pair<size_t, size_t>> Find(std::string_view text) const;
  // `text` with every match replaced by `content`.
  std::string ReplaceAll(std::string_view text, std::string_view content) const;

 private:
  std::string literal_;                         // when regex_ is null
  std::shared_ptr<const RegexSplitter> regex_;  // shared: patterns are copied by value
};

}  // namespace vllm::hf
