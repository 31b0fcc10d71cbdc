// Splits template source into tokens: the text between tags, the tag delimiters, and the names,
// literals and operators inside tags. Whitespace control happens here, as transformers sets Jinja
// up: trim_blocks (a newline right after a block tag or comment goes), lstrip_blocks (spaces
// and tabs from the start of a line up to a block tag or comment go), `{%-` / `-%}` (and the
// same on `{{ }}` and `{# #}`) strip all whitespace on that side, `{%+` / `+%}` turn the
// trimming off, and one trailing newline of the template is dropped. Line endings become "\n".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vllm::jinja {

enum class TokenKind {
  kText,            // template text outside tags, whitespace control applied
  kPrintBegin,      // {{
  kPrintEnd,        // }}
  kStatementBegin,  // {%
  kStatementEnd,    // %}
  kName,            // identifiers and keywords
  kString,          // text holds the decoded value
  kInteger,
  kFloat,
  kOperator,  // text holds the operator: "+", "//", "==", "(", ...
  kEnd,
};

struct Token {
  TokenKind kind;
  std::string text;
  int line;  // 1-based
  int64_t int_value = 0;
  double float_value = 0;
};

// Throws SyntaxError for unterminated tags, comments or strings and for characters that start no
// token. The last token is kEnd.
std::vector<Token> Tokenize(std::string_view source);

}  // namespace vllm::jinja
