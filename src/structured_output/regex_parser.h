// Parses a regular expression as vLLM users write them for guided_regex and JSON Schema
// `pattern` (Python `re` / JavaScript syntax) into a tree of character sets, sequences,
// alternations and bounded repetitions: the regular language, for a grammar to match in full.
//
// Supported: literals; escapes \d \w \s \D \W \S \n \t \r \f \v \a \0 \xHH \uHHHH \UHHHHHHHH
// \u{H...} \cX and escaped punctuation; classes [...] / [^...] with ranges and escapes; `.` (any
// code point but newline, as Python's default); groups ( ), (?: ), (?P<name> ), (?<name> ),
// (?#comment); alternation; quantifiers * + ? {m} {m,} {m,n} {,n} and their lazy forms (same
// language); ^ \A at the start and $ \Z \z at the end (ignored: the match is always full).
// Refused with an Error naming the construct: backreferences, lookarounds, word boundaries,
// inline flags, atomic groups, possessive quantifiers, conditionals, \p{..} classes.
#pragma once

#include <string_view>
#include <vector>

#include "common/expected.h"
#include "structured_output/gbnf_text.h"

namespace vllm {

struct RegexNode {
  enum class Kind {
    kCodePoints,   // one code point from `code_points`
    kSequence,     // `children` one after another (none: the empty string)
    kAlternation,  // one of `children`
    kRepeat,       // children[0], min_count to max_count times
  };
  static constexpr int kUnbounded = -1;

  Kind kind = Kind::kSequence;
  CodePointSet code_points;
  std::vector<RegexNode> children;
  int min_count = 0;
  int max_count = kUnbounded;
};

// The deepest group nesting a pattern may have.
constexpr int kMaxRegexNesting = 100;
// The largest count a quantifier may have.
constexpr int kMaxRegexRepeatCount = 100000;

Expected<RegexNode> ParseRegex(std::string_view pattern);

}  // namespace vllm
