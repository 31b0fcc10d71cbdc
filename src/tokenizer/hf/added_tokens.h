// Added tokens (tokenizer.json "added_tokens", tokenizer_config.json "added_tokens_decoder"):
// text that becomes one id wherever it occurs, found before the model sees the text.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/expected.h"
#include "tokenizer/hf/json_fields.h"

namespace vllm::hf {

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;      // dropped by Decode with skip_special_tokens
  bool lstrip = false;       // the match takes the whitespace before it
  bool rstrip = false;       // the match takes the whitespace after it
  bool normalized = false;   // matched in the normalized text rather than the raw text
  bool single_word = false;  // matched only where it is not part of a longer word
};

// {"id": 5, "content": "<s>", "special": true, ...}; `id`, when given, is used instead of the
// object's "id" (added_tokens_decoder keys the objects by id). normalized defaults to !special.
Expected<AddedToken> ParseAddedToken(const Json& json, std::optional<int32_t> id,
                                     std::string_view context);

// A run of text: an added token's id, or -1 for text to tokenize normally; [begin, end) in the
// text given to Split.
struct TextSegment {
  int32_t token_id;
  size_t begin;
  size_t end;
};

// Finds added tokens as Hugging Face's AddedVocabulary does: leftmost-longest matches, left to
// right; a single_word match inside a word is skipped; lstrip / rstrip widen a match over the
// whitespace beside it.
class AddedTokenMatcher {
 public:
  explicit AddedTokenMatcher(const std::vector<AddedToken>& tokens);

  bool empty() const { return tokens_.empty(); }
  std::vector<TextSegment> Split(std::string_view text) const;

 private:
  struct Node {
    std::vector<std::pair<unsigned char, int32_t>> children;
    int32_t token = -1;  // index in tokens_ of the token ending here
  };
  // The longest token starting at text[pos]: (index in tokens_, length), or index -1.
  std::pair<int32_t, size_t> LongestMatch(std::string_view text, size_t pos) const;

  std::vector<AddedToken> tokens_;
  std::array<int32_t, 256> root_;  // the node after each first byte; -1 where none
  std::vector<Node> nodes_;
};

}  // namespace vllm::hf
