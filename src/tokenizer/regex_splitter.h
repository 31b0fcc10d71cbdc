// Pre-tokenization by a sequence of Unicode regexes (PCRE2, UTF + UCP). Each regex splits every
// piece from the previous one into its matches and the text between them, as llama.cpp's
// unicode_regex_split does; each piece is its own subject, so anchors and look-aheads stop at
// the piece's edges.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/expected.h"

namespace vllm {

class RegexSplitter {
 public:
  static Expected<RegexSplitter> Create(const std::vector<std::string>& patterns);
  RegexSplitter(RegexSplitter&&) noexcept;
  RegexSplitter& operator=(RegexSplitter&&) noexcept;
  ~RegexSplitter();

  // Pieces of `text`, in order, covering all of it.
  std::vector<std::string_view> Split(std::string_view text) const;
  // The non-empty matches of the first pattern in `text`, in order and without overlap, as
  // [begin, end) byte offsets (for a splitter made from one pattern).
  std::vector<std::pair<size_t, size_t>> Matches(std::string_view text) const;

 private:
  struct Compiled;
  RegexSplitter();
  std::vector<std::unique_ptr<Compiled>> regexes_;
};

}  // namespace vllm
