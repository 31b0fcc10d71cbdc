// Splits text around the vocabulary's special tokens (control, user-defined, unknown), so each
// occurrence becomes that single id and only the text between is tokenized normally.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/gguf_vocab.h"

namespace vllm {

struct TextFragment {
  int32_t token_id;       // >= 0: a special token; -1: raw text to tokenize
  std::string_view text;  // the raw text (empty for a special token)
};

class SpecialTokenSplitter {
 public:
  explicit SpecialTokenSplitter(const GgufVocab& vocab);
  std::vector<TextFragment> Split(std::string_view text) const;

 private:
  std::vector<std::pair<std::string, int32_t>> specials_;  // longest text first
};

}  // namespace vllm
