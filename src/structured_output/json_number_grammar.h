// GBNF for JSON integers and numbers, optionally within a range (JSON Schema minimum, maximum,
// exclusiveMinimum, exclusiveMaximum). Bounds are exact decimals, so ranges are exact: the
// grammar spells out, digit by digit, which integer and fraction digits stay in range.
//
// Unbounded: integer  "0" | "-"? [1-9] [0-9]*   (no "-0", as xgrammar)
//            number   "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
// A number with a bound has no exponent part (as xgrammar): 1e3 is then written 1000.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/expected.h"

namespace vllm {

// An exact decimal: integer digits without leading zeros ("0" for zero), fraction digits
// without trailing zeros; zero is never negative.
struct Decimal {
  bool negative = false;
  std::string integer_digits = "0";
  std::string fraction_digits;
};

// The most digits (integer and fraction together) a bound may have: any double written out
// in full fits (1.8e308 has 309 integer digits, 5e-324 has 324 fraction digits).
constexpr size_t kMaxBoundDigits = 400;

// `value` (a JSON number) as an exact decimal: integers exactly, floating-point values as their
// shortest round-trip decimal. An Error when it is not a number or has too many digits.
Expected<Decimal> DecimalFromJson(const nlohmann::ordered_json& value);

// -1, 0 or 1 as a is below, equal to or above b.
int CompareDecimals(const Decimal& a, const Decimal& b);

struct NumberBound {
  Decimal value;
  bool exclusive = false;
};

// A GBNF expression for the JSON integers within the bounds (either may be absent). An Error
// when no integer is within them.
Expected<std::string> IntegerRangeGbnf(const std::optional<NumberBound>& minimum,
                                       const std::optional<NumberBound>& maximum);

// A GBNF expression for the JSON numbers within the bounds (either may be absent). An Error
// when the range is empty.
Expected<std::string> NumberRangeGbnf(const std::optional<NumberBound>& minimum,
                                      const std::optional<NumberBound>& maximum);

}  // namespace vllm
