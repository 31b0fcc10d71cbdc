// Python's format(value, spec): the format specification mini-language that str.format() fields
// use, and that printf-style conversions (`%5.2f`) are translated to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "chat_template/value.h"

namespace vllm::jinja {

// [[fill]align][sign][#][0][width][grouping][.precision][type]
struct FormatSpec {
  std::string fill = " ";  // one code point
  char align = '\0';       // '<', '>', '^', '=', or '\0' for the type's default
  char sign = '\0';        // '+', ' ', '-', or '\0' for none given (which acts as '-')
  bool alternate = false;  // '#': 0x, 0o, 0b prefixes; a kept point and zeros for floats
  bool zero = false;       // '0': pad numbers with zeros after the sign
  int64_t width = 0;
  char grouping = '\0';  // ',' or '_' between thousands (or groups of four hex digits)
  std::optional<int64_t> precision;
  char type = '\0';        // s, d, x, X, o, b, c, e, E, f, F, g, G, %, or '\0'
  int64_t min_digits = 0;  // printf's precision of an integer: its digits padded with zeros
};

// Parses a spec as str.format() fields write it; throws RenderError for a malformed one.
FormatSpec ParseFormatSpec(std::string_view text);

// format(value, spec) for str, int, bool, float, and (with an empty spec only) other values,
// which print as str() does. Throws RenderError where Python raises, and for results longer
// than `budget` allows.
std::string FormatWithSpec(const Value& value, const FormatSpec& spec, const RenderBudget& budget);

// Python's repr() with every non-ASCII code point escaped (\xe9, \u2028, \U0001f600): ascii().
std::string AsciiRepr(const Value& value, const RenderBudget& budget);

}  // namespace vllm::jinja
