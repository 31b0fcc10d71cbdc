#include "tokenizer/regex_splitter.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "common/utf8.h"

namespace vllm {
namespace {

// Calls on_match(begin, end) for each non-empty match of `code` in `subject`, left to right.
template <typename OnMatch>
void ForEachMatch(const pcre2_code* code, pcre2_match_data* match, std::string_view subject,
                  OnMatch on_match) {
  const auto* data = reinterpret_cast<PCRE2_SPTR>(subject.data());
  size_t offset = 0;
  while (offset <= subject.size()) {
    int rc = pcre2_match(code, data, subject.size(), offset, 0, match, nullptr);
    if (rc < 0) break;
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
    size_t match_begin = ovector[0];
    size_t match_end = ovector[1];
    if (match_end == match_begin) {  // an empty match: move on one character
      if (match_end >= subject.size()) break;
      offset = match_end + Utf8SequenceLength(static_cast<unsigned char>(subject[match_end]));
      continue;
    }
    on_match(match_begin, match_end);
    offset = match_end;
  }
}

}  // namespace

struct RegexSplitter::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

RegexSplitter::RegexSplitter() = default;
RegexSplitter::RegexSplitter(RegexSplitter&&) noexcept = default;
RegexSplitter& RegexSplitter::operator=(RegexSplitter&&) noexcept = default;
RegexSplitter::~RegexSplitter() = default;

Expected<RegexSplitter> RegexSplitter::Create(const std::vector<std::string>& patterns) {
  RegexSplitter splitter;
  for (const std::string& pattern : patterns) {
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    auto compiled = std::make_unique<Compiled>();
    // MATCH_INVALID_UTF: user text may hold invalid UTF-8; it must not make matching fail.
    compiled->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error_code,
                                   &error_offset, nullptr);
    if (compiled->code == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error_code, message, sizeof(message));
      return Error{"invalid pre-tokenizer regex at offset " + std::to_string(error_offset) + ": " +
                   reinterpret_cast<const char*>(message)};
    }
    pcre2_jit_compile(compiled->code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter
    splitter.regexes_.push_back(std::move(compiled));
  }
  return splitter;
}

std::vector<std::string_view> RegexSplitter::Split(std::string_view text) const {
  std::vector<std::string_view> pieces;
  if (!text.empty()) pieces.push_back(text);
  for (const auto& regex : regexes_) {
    pcre2_match_data* match = pcre2_match_data_create_from_pattern(regex->code, nullptr);
    std::vector<std::string_view> next;
    for (std::string_view piece : pieces) {
      size_t start = 0;  // start of the text not yet assigned to a piece
      ForEachMatch(regex->code, match, piece, [&](size_t match_begin, size_t match_end) {
        if (match_begin > start) next.push_back(piece.substr(start, match_begin - start));
        next.push_back(piece.substr(match_begin, match_end - match_begin));
        start = match_end;
      });
      if (start < piece.size()) next.push_back(piece.substr(start));
    }
    pcre2_match_data_free(match);
    pieces = std::move(next);
  }
  return pieces;
}

std::vector<std::pair<size_t, size_t>> RegexSplitter::Matches(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> matches;
  if (regexes_.empty()) return matches;
  pcre2_code* code = regexes_.front()->code;
  pcre2_match_data* match = pcre2_match_data_create_from_pattern(code, nullptr);
  ForEachMatch(code, match, text,
               [&](size_t begin, size_t end) { matches.emplace_back(begin, end); });
  pcre2_match_data_free(match);
  return matches;
}

}  // namespace vllm
