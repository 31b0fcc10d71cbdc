// Builds the syntax tree of a template with Jinja's grammar. Operator precedence, loosest first:
// `x if c else y`; or; and; not; comparisons, `in` and `not in`; + and -; ~; * / // %; **;
// unary - and +; then `.attr`, `[key]`, `[a:b:c]`, `(args)`, `| filter` and `is test`, which
// bind tightest (so `-x | abs` is abs(-x) and `not x is defined` is not (x is defined)).
#pragma once

#include <string_view>

#include "chat_template/ast.h"

namespace vllm::jinja {

// Throws SyntaxError naming the problem and its line.
Template ParseTemplate(std::string_view source);

}  // namespace vllm::jinja
