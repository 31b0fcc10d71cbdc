// Regular expression → GBNF, for vLLM's guided_regex / structured_outputs.regex and for JSON
// Schema `pattern` and `format`. The grammar matches the whole output against the pattern (a
// full match, as vLLM's backends do); the pattern syntax is described in regex_parser.h. The
// grammar engine does not backtrack, so patterns such as (a+)+$ or (a|a)*b are harmless.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/expected.h"

namespace vllm {

// How the text that the pattern matches is written in the output.
enum class RegexTextForm {
  kRaw,             // as itself (guided_regex)
  kJsonStringBody,  // inside a JSON string literal: `"` as \", `\` as \\, `/` as / or \/,
                    // control characters as their short escape or \u00XX (either hex case).
                    // Other characters are accepted only as themselves, not as \uXXXX.
};

// The largest size a pattern may have once its counted repetitions are expanded (in grammar
// elements, the unit in which the grammar engine bounds a grammar).
constexpr int64_t kMaxRegexExpandedElements = 200000;

// A GBNF expression (the right-hand side of a rule) matching exactly the strings of `pattern`,
// written in `form`.
Expected<std::string> RegexToGbnfExpression(std::string_view pattern, RegexTextForm form);

// A grammar whose `root` matches exactly the strings that `pattern` matches in full.
Expected<std::string> RegexToGbnf(std::string_view pattern);

}  // namespace vllm
