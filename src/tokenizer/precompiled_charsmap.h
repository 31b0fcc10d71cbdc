// SentencePiece's precompiled normalization rules (normalizer_spec.precompiled_charsmap, written
// into tokenizer.json's "Precompiled" normalizer and GGUF's tokenizer.ggml.precompiled_charsmap):
//
//   [u32 trie_bytes, little-endian][trie: trie_bytes / 4 u32 units][replacements: NUL-ended]
//
// The trie is a darts-clone double array over UTF-8 byte strings; a key's value is the offset of
// its replacement in the replacement blob. The blob is untrusted: it is checked as a whole when
// parsed and every unit and offset is bounds-checked when looked up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace vllm {

class PrecompiledCharsmap {
 public:
  // An empty blob gives rules that match nothing.
  static Expected<PrecompiledCharsmap> Parse(std::string_view blob);

  bool empty() const { return units_.empty(); }

  // Hugging Face's rule for a chunk (a grapheme or a character): the replacement of the
  // shortest key that prefixes it, which then replaces the whole chunk.
  std::optional<std::string_view> ShortestMatch(std::string_view chunk) const;

  // SentencePiece's step over non-empty `text`: appends to *out the replacement of the longest
  // matching key, else the first UTF-8 character (U+FFFD for an invalid byte); returns the bytes
  // of `text` consumed.
  size_t NormalizePrefix(std::string_view text, std::string* out) const;

 private:
  // SentencePiece's rule at the start of `text`: the longest key that prefixes it. Returns the
  // key's length in bytes (0 when none) and sets *replacement.
  size_t LongestMatch(std::string_view text, std::string_view* replacement) const;
  // Calls on_match(key_length, replacement) for each key that prefixes `text`, shortest first,
  // until it returns false.
  template <typename OnMatch>
  void ForEachPrefixMatch(std::string_view text, OnMatch on_match) const;
  std::string_view ReplacementAt(uint32_t offset) const;

  std::vector<uint32_t> units_;
  std::string replacements_;
};

}  // namespace vllm
