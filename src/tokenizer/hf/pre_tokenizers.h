// Pre-tokenizers of tokenizer.json ("pre_tokenizer"): they cut normalized text into the pieces
// the model tokenizes one at a time, and may rewrite them (ByteLevel, Metaspace). Supported
// types: Sequence, Split, ByteLevel, Metaspace, Digits, Whitespace, WhitespaceSplit,
// Punctuation, BertPreTokenizer.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/expected.h"
#include "tokenizer/hf/json_fields.h"

namespace vllm::hf {

struct PreToken {
  std::string text;
  bool at_input_start;  // begins where the encoded text begins (Metaspace's prepend "first")
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces each piece by its sub-pieces; empty pieces are dropped.
  virtual void PreTokenize(std::vector<PreToken>* pieces) const = 0;
};

// How a split keeps the matched delimiters (tokenizers' SplitDelimiterBehavior).
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

// The pieces of `text` cut at `matches` ([begin, end), ordered, disjoint) as `behavior` says;
// with `invert` the matches and the text between them swap roles. Empty pieces are left out.
std::vector<std::pair<size_t, size_t>> SplitByMatches(
    size_t text_size, const std::vector<std::pair<size_t, size_t>>& matches, SplitBehavior behavior,
    bool invert);

// nullptr (the whole text is one piece) for a null pre-tokenizer.
Expected<std::unique_ptr<PreTokenizer>> ParsePreTokenizer(
    const Json& json, std::string_view context = "pre_tokenizer");

}  // namespace vllm::hf
