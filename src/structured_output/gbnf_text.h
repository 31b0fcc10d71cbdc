// Writing GBNF text: string literals, character classes and code point escapes, shared by the
// constraint compilers (JSON Schema, regex, choice). Also UTF-8 decoding of untrusted text, as
// GBNF terminals are Unicode code points.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/utf8_encode.h"

namespace vllm {

constexpr char32_t kMaxCodePoint = 0x10FFFF;

// An inclusive range of code points.
struct CodePointRange {
  char32_t first = 0;
  char32_t last = 0;
};

// A set of code points as sorted, disjoint, non-adjacent ranges.
class CodePointSet {
 public:
  CodePointSet() = default;
  static CodePointSet Of(char32_t code_point) { return Range(code_point, code_point); }
  static CodePointSet Range(char32_t first, char32_t last);
  static CodePointSet All() { return Range(0, kMaxCodePoint); }

  void Add(char32_t first, char32_t last);
  void Add(const CodePointSet& other);
  CodePointSet Complement() const;
  CodePointSet Intersect(const CodePointSet& other) const;
  CodePointSet Minus(const CodePointSet& other) const;

  bool empty() const { return ranges_.empty(); }
  bool Contains(char32_t code_point) const;
  // The single code point of a one-element set.
  std::optional<char32_t> Single() const;
  const std::vector<CodePointRange>& ranges() const { return ranges_; }

 private:
  std::vector<CodePointRange> ranges_;
};

// The code points of UTF-8 text, or nullopt when it is not valid UTF-8 (overlong forms,
// surrogates and values past U+10FFFF are invalid).
std::optional<std::u32string> DecodeUtf8(std::string_view text);

// A GBNF string literal matching exactly `text` (valid UTF-8): `"..."` with `"`, `\` and
// control characters escaped.
std::string GbnfLiteral(std::string_view text);

// A GBNF character class matching exactly `set` (not empty): `.` for every code point,
// otherwise `[...]` or `[^...]`, whichever is shorter.
std::string GbnfCharClass(const CodePointSet& set);

// A GBNF expression for `set`: a literal for a single code point, else a character class.
std::string GbnfCodePoints(const CodePointSet& set);

// The alternatives joined as "a | b | c".
std::string JoinGbnfAlternatives(const std::vector<std::string>& alternatives);

}  // namespace vllm
