#include "tokenizer/regex_splitter.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "tokenizer/utf8.h"

namespace vllm {

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
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
      size_t start = 0;  // start of the text not yet assigned to a piece
      size_t offset = 0;
      while (offset <= piece.size()) {
        int rc = pcre2_match(regex->code, subject, piece.size(), offset, 0, match, nullptr);
        if (rc < 0) break;
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
        size_t match_begin = ovector[0];
        size_t match_end = ovector[1];
        if (match_end == match_begin) {  // an empty match: move on one character
          if (match_end >= piece.size()) break;
          offset = match_end + Utf8SequenceLength(static_cast<unsigned char>(piece[match_end]));
          continue;
        }
        if (match_begin > start) next.push_back(piece.substr(start, match_begin - start));
        next.push_back(piece.substr(match_begin, match_end - match_begin));
        start = offset = match_end;
      }
      if (start < piece.size()) next.push_back(piece.substr(start));
    }
    pcre2_match_data_free(match);
    pieces = std::move(next);
  }
  return pieces;
}

}  // namespace vllm
