#include "tokenizer/regex_splitter.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <optional>

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

std::optional<std::vector<std::string>> PreTokenizerPatterns(const std::string& pre) {
  const std::string gpt2 =
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
  const std::string llama3 =
      "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
      "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  if (pre == "llama3" || pre == "llama-v3" || pre == "llama-bpe" || pre == "dbrx" ||
      pre == "smaug-bpe" || pre == "falcon3") {
    return std::vector<std::string>{llama3};
  }
  if (pre == "qwen2" || pre == "deepseek-r1-qwen") {
    return std::vector<std::string>{
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
        "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"};
  }
  if (pre == "gpt-2" || pre == "mpt" || pre == "olmo" || pre == "jais") {
    return std::vector<std::string>{gpt2};
  }
  if (pre == "starcoder" || pre == "refact" || pre == "command-r" || pre == "smollm" ||
      pre == "codeshell" || pre == "exaone") {
    return std::vector<std::string>{"\\p{N}", gpt2};
  }
  if (pre == "falcon") {
    return std::vector<std::string>{"[\\p{P}\\$\\+<=>\\^~\\|`]+", gpt2, "[0-9][0-9][0-9]"};
  }
  if (pre == "deepseek-coder") {
    return std::vector<std::string>{"[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+",
                                    "[一-龥ࠀ-一가-퟿]+", "\\p{N}"};
  }
  if (pre == "deepseek-llm") {
    return std::vector<std::string>{
        "[\\r\\n]",
        // Code points that Unicode normalization would fold (Greek oxia forms, the Ohm and Kelvin
        // signs) are written as escapes so the ranges stay exactly llama.cpp's.
        "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-"
        "ᏽᲐ-"
        "ᲺᲽ-"
        "Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-"
        "ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝ\\x{1F5F}-\\x{1F7D}ᾀ-ᾴᾶ-ᾼ\\x{1FBE}ῂ-ῄῆ-ῌ\\x{1FD0}-\\x{1FD3}"
        "\\x{1FD6}-\\x{1FDB}ῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\\x{2126}ℨ\\x{212A}-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳ"
        "Ꙁ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-"
        "𐲲𐳀-"
        "𐳲𑢠-"
        "𑣟𞤀-𞥃]+",
        "\\s?[!-/:-~！-／：-～‘-‟　-。]+", "\\s+$", "[一-龥ࠀ-一가-퟿]+", "\\p{N}+"};
  }
  if (pre.empty() || pre == "default") {
    return std::vector<std::string>{"[\\p{P}\\$\\+<=>\\^~\\|]+", gpt2, "\\p{N}+",
                                    "[0-9][0-9][0-9]"};
  }
  return std::nullopt;
}

}  // namespace vllm
