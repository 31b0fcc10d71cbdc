// Greedy longest-match-first WordPiece, the one implementation behind the GGUF tokenizer
// (wordpiece_tokenizer.cc) and tokenizer.json's WordPiece model (hf/wordpiece_model.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/utf8.h"

namespace vllm {

// Appends `word`'s pieces to `ids`: from the word's start, the longest run of whole characters
// that `find` knows, then the same from where that piece ended; every piece after the first is
// looked up with `continuation_prefix` in front ("##" in tokenizer.json, "" in GGUF, whose
// word-initial pieces carry a ▁ instead). Lookups longer than `max_lookup_bytes` (the longest
// token) are skipped. Returns false, with `ids` as it was, when some position starts no piece.
//
// find: std::optional<int32_t>(const std::string& lookup)
template <typename Find>
bool AppendWordPieces(std::string_view word, std::string_view continuation_prefix,
                      size_t max_lookup_bytes, const Find& find, std::vector<int32_t>* ids) {
  const std::vector<std::string_view> chars = SplitUtf8Characters(word);
  const size_t first_id = ids->size();
  std::string lookup;
  // Pieces start and end at character boundaries: chars[start, end).
  auto end_byte = [&](size_t end) {
    return static_cast<size_t>(chars[end - 1].data() + chars[end - 1].size() - word.data());
  };
  for (size_t start = 0; start < chars.size();) {
    const size_t begin_byte = chars[start].data() - word.data();
    const std::string_view prefix = start > 0 ? continuation_prefix : std::string_view();
    // The longest run a lookup may hold, so a long word costs at most max_lookup_bytes lookups
    // per piece.
    size_t end = start;
    while (end < chars.size() &&
           prefix.size() + end_byte(end + 1) - begin_byte <= max_lookup_bytes) {
      ++end;
    }
    for (; end > start; --end) {
      lookup.assign(prefix);
      lookup.append(word.substr(begin_byte, end_byte(end) - begin_byte));
      if (std::optional<int32_t> id = find(lookup)) {
        ids->push_back(*id);
        break;
      }
    }
    if (end == start) {  // nothing fits at `start`: the whole word is unknown
      ids->resize(first_id);
      return false;
    }
    start = end;
  }
  return true;
}

}  // namespace vllm
