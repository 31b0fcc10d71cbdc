// GBNF for JSON integers and numbers within exact decimal bounds.
//
// A value in range is split by sign (a negative one is "-" and a magnitude) and each magnitude
// range by its integer part:
//
//   magnitude in [12.5, 40.25]:  "12" "." (fraction >= .5)          integer part = low's
//                              | (13..39) ("." [0-9]+)?             any fraction
//                              | "40" ("." (fraction <= .25))?      integer part = high's
//
// Integer ranges are split by digit count and then digit by digit ([123, 4567]: 12[3-9] |
// 1[3-9][0-9] | [2-9][0-9]{2} | [1-3][0-9]{3} | 4[0-4][0-9]{2} | 45[0-5][0-9] | 456[0-7]);
// fraction digit strings compare as zero-padded strings, so ".5", ".50" and ".500" are equal.
#include "structured_output/json_number_grammar.h"

#include <charconv>
#include <vector>

#include "structured_output/gbnf_text.h"

namespace vllm {
namespace {

constexpr const char* kAnyFraction = "(\".\" [0-9]+)?";

// A signed integer of any size: a magnitude without leading zeros; zero is not negative.
struct BigInteger {
  bool negative = false;
  std::string digits = "0";
};

bool AllDigits(const std::string& text, char digit) {
  return text.find_first_not_of(digit) == std::string::npos;
}

int CompareMagnitudes(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

std::string AddOne(std::string digits) {
  for (size_t i = digits.size(); i-- > 0;) {
    if (digits[i] != '9') {
      ++digits[i];
      return digits;
    }
    digits[i] = '0';
  }
  return "1" + digits;
}

// digits > 0.
std::string SubtractOne(std::string digits) {
  for (size_t i = digits.size(); i-- > 0;) {
    if (digits[i] != '0') {
      --digits[i];
      break;
    }
    digits[i] = '9';
  }
  if (digits.size() > 1 && digits[0] == '0') digits.erase(0, 1);
  return digits;
}

BigInteger Increment(BigInteger value) {
  if (!value.negative) return {false, AddOne(value.digits)};
  value.digits = SubtractOne(value.digits);
  value.negative = value.digits != "0";
  return value;
}

BigInteger Decrement(BigInteger value) {
  if (value.negative || value.digits == "0") return {true, AddOne(value.digits)};
  return {false, SubtractOne(value.digits)};
}

int CompareIntegers(const BigInteger& a, const BigInteger& b) {
  if (a.negative != b.negative) return a.negative ? -1 : 1;
  const int magnitude_order = CompareMagnitudes(a.digits, b.digits);
  return a.negative ? -magnitude_order : magnitude_order;
}

// Fraction digit strings compared as zero-padded decimals.
int CompareFractions(const std::string& a, const std::string& b) {
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const char digit_a = i < a.size() ? a[i] : '0';
    const char digit_b = i < b.size() ? b[i] : '0';
    if (digit_a != digit_b) return digit_a < digit_b ? -1 : 1;
  }
  return 0;
}

int CompareDecimalMagnitudes(const Decimal& a, const Decimal& b) {
  const int integer_order = CompareMagnitudes(a.integer_digits, b.integer_digits);
  return integer_order != 0 ? integer_order
                            : CompareFractions(a.fraction_digits, b.fraction_digits);
}

}  // namespace

int CompareDecimals(const Decimal& a, const Decimal& b) {
  if (a.negative != b.negative) return a.negative ? -1 : 1;
  const int magnitude_order = CompareDecimalMagnitudes(a, b);
  return a.negative ? -magnitude_order : magnitude_order;
}

namespace {

bool IsZero(const Decimal& value) {
  return value.integer_digits == "0" && value.fraction_digits.empty();
}

Decimal Negated(Decimal value) {
  value.negative = !value.negative && !IsZero(value);
  return value;
}

// The smallest integer >= value (or > value when exclusive).
BigInteger IntegerAtLeast(const Decimal& value, bool exclusive) {
  BigInteger truncated{value.negative && value.integer_digits != "0", value.integer_digits};
  if (!value.fraction_digits.empty()) return value.negative ? truncated : Increment(truncated);
  return exclusive ? Increment(truncated) : truncated;
}

// The largest integer <= value (or < value when exclusive).
BigInteger IntegerAtMost(const Decimal& value, bool exclusive) {
  BigInteger truncated{value.negative && value.integer_digits != "0", value.integer_digits};
  if (!value.fraction_digits.empty()) return value.negative ? Decrement(truncated) : truncated;
  return exclusive ? Decrement(truncated) : truncated;
}

std::string Literal(const std::string& digits) { return "\"" + digits + "\""; }

std::string DigitClass(char low, char high) {
  if (low == high) return Literal(std::string(1, low));
  if (low == '0' && high == '9') return "[0-9]";
  return std::string("[") + low + "-" + high + "]";
}

// Exactly `count` free digits.
std::string FreeDigits(size_t count) {
  return count == 1 ? "[0-9]" : "[0-9]{" + std::to_string(count) + "}";
}

std::string Parenthesized(const std::vector<std::string>& alternatives) {
  return "(" + JoinGbnfAlternatives(alternatives) + ")";
}

// One alternative as it is, several in parentheses.
std::string Grouped(const std::vector<std::string>& alternatives) {
  return alternatives.size() == 1 ? alternatives[0] : Parenthesized(alternatives);
}

// Appends the alternatives matching the digit strings of low's length within [low, high]
// (equal lengths, low <= high), each after the fixed digits `prefix`.
void SameLengthRange(const std::string& low, const std::string& high, const std::string& prefix,
                     std::vector<std::string>* out) {
  const size_t length = low.size();
  auto with_prefix = [&](const std::string& rest) {
    return prefix.empty() ? rest : Literal(prefix) + " " + rest;
  };
  if (length == 1) {
    out->push_back(with_prefix(DigitClass(low[0], high[0])));
    return;
  }
  if (low[0] == high[0]) {
    SameLengthRange(low.substr(1), high.substr(1), prefix + low[0], out);
    return;
  }
  const std::string low_rest = low.substr(1);
  const std::string high_rest = high.substr(1);
  char middle_first = low[0];
  char middle_last = high[0];
  if (!AllDigits(low_rest, '0')) {
    SameLengthRange(low_rest, std::string(length - 1, '9'), prefix + low[0], out);
    ++middle_first;
  }
  const bool high_rest_is_full = AllDigits(high_rest, '9');
  if (!high_rest_is_full) --middle_last;
  if (middle_first <= middle_last) {
    out->push_back(
        with_prefix(DigitClass(middle_first, middle_last) + " " + FreeDigits(length - 1)));
  }
  if (!high_rest_is_full) {
    SameLengthRange(std::string(length - 1, '0'), high_rest, prefix + high[0], out);
  }
}

// Alternatives matching the magnitudes (no leading zeros) in [low, high]; high absent: no
// upper bound. low <= high.
std::vector<std::string> MagnitudeRange(const std::string& low,
                                        const std::optional<std::string>& high) {
  std::vector<std::string> alternatives;
  const size_t low_length = low.size();
  if (high && high->size() == low_length) {
    SameLengthRange(low, *high, "", &alternatives);
    return alternatives;
  }
  SameLengthRange(low, std::string(low_length, '9'), "", &alternatives);
  if (!high) {
    alternatives.push_back("[1-9] [0-9]{" + std::to_string(low_length) + ",}");
    return alternatives;
  }
  const size_t high_length = high->size();
  if (high_length >= low_length + 2) {  // every magnitude of the lengths in between
    const size_t min_rest = low_length;
    const size_t max_rest = high_length - 2;
    alternatives.push_back("[1-9] " + (min_rest == max_rest
                                           ? FreeDigits(min_rest)
                                           : "[0-9]{" + std::to_string(min_rest) + "," +
                                                 std::to_string(max_rest) + "}"));
  }
  SameLengthRange("1" + std::string(high_length - 1, '0'), *high, "", &alternatives);
  return alternatives;
}

// The fraction digit strings (possibly empty; zero-padded values) meeting a constraint: whether
// the empty string does, and alternatives for the non-empty ones.
struct FractionDigits {
  bool accepts_empty = false;
  std::vector<std::string> alternatives;
};

// `digit` followed by a string of `rest`, as one alternative of `out`.
void AppendPrefixed(char digit, const FractionDigits& rest, FractionDigits* out) {
  const std::string head = Literal(std::string(1, digit));
  if (rest.alternatives.empty()) {
    if (rest.accepts_empty) out->alternatives.push_back(head);
    return;
  }
  out->alternatives.push_back(
      head + " " +
      (rest.accepts_empty ? Parenthesized(rest.alternatives) + "?" : Grouped(rest.alternatives)));
}

std::string Rest(const std::string& digits) { return digits.empty() ? "" : digits.substr(1); }
char First(const std::string& digits) { return digits.empty() ? '0' : digits[0]; }

// Fractions >= .bound (> when strict).
FractionDigits FractionsAtLeast(const std::string& bound, bool strict) {
  if (bound.empty()) {
    if (strict) return {false, {"\"0\"* [1-9] [0-9]*"}};
    return {true, {"[0-9]+"}};
  }
  FractionDigits result;
  if (bound[0] < '9') result.alternatives.push_back(DigitClass(bound[0] + 1, '9') + " [0-9]*");
  AppendPrefixed(bound[0], FractionsAtLeast(Rest(bound), strict), &result);
  return result;
}

// Fractions <= .bound (< when strict).
FractionDigits FractionsAtMost(const std::string& bound, bool strict) {
  if (bound.empty()) {
    if (strict) return {};
    return {true, {"\"0\"+"}};
  }
  FractionDigits result{true, {}};
  if (bound[0] > '0') result.alternatives.push_back(DigitClass('0', bound[0] - 1) + " [0-9]*");
  AppendPrefixed(bound[0], FractionsAtMost(Rest(bound), strict), &result);
  return result;
}

// Fractions within [.low, .high] (each end exclusive when strict); .low <= .high.
FractionDigits FractionsBetween(const std::string& low, const std::string& high, bool low_strict,
                                bool high_strict) {
  if (low.empty() && high.empty()) {
    if (low_strict || high_strict) return {};
    return {true, {"\"0\"+"}};
  }
  FractionDigits result;
  result.accepts_empty = low.empty() && !low_strict && (!high.empty() || !high_strict);
  const char low_first = First(low);
  const char high_first = First(high);
  if (low_first == high_first) {
    AppendPrefixed(low_first, FractionsBetween(Rest(low), Rest(high), low_strict, high_strict),
                   &result);
    return result;
  }
  AppendPrefixed(low_first, FractionsAtLeast(Rest(low), low_strict), &result);
  if (low_first + 1 <= high_first - 1) {
    result.alternatives.push_back(DigitClass(low_first + 1, high_first - 1) + " [0-9]*");
  }
  AppendPrefixed(high_first, FractionsAtMost(Rest(high), high_strict), &result);
  return result;
}

// The integer part `integer_digits` followed by a fraction of `fraction`, if any may follow.
void AppendWithFraction(const std::string& integer_digits, const FractionDigits& fraction,
                        std::vector<std::string>* out) {
  const std::string head = Literal(integer_digits);
  if (fraction.alternatives.empty()) {
    if (fraction.accepts_empty) out->push_back(head);
    return;
  }
  const std::string dotted = "\".\" " + Grouped(fraction.alternatives);
  out->push_back(head + (fraction.accepts_empty ? " (" + dotted + ")?" : " " + dotted));
}

// Alternatives for the decimal magnitudes (no sign, no exponent) from low to high (absent: no
// upper bound), each end exclusive when its flag says so.
std::vector<std::string> DecimalMagnitudeRange(const Decimal& low, bool low_exclusive,
                                               const std::optional<Decimal>& high,
                                               bool high_exclusive) {
  std::vector<std::string> alternatives;
  if (high) {
    const int order = CompareDecimalMagnitudes(low, *high);
    if (order > 0 || (order == 0 && (low_exclusive || high_exclusive))) return alternatives;
  }
  const std::string& low_integer = low.integer_digits;
  if (high && high->integer_digits == low_integer) {
    AppendWithFraction(
        low_integer,
        FractionsBetween(low.fraction_digits, high->fraction_digits, low_exclusive, high_exclusive),
        &alternatives);
    return alternatives;
  }
  AppendWithFraction(low_integer, FractionsAtLeast(low.fraction_digits, low_exclusive),
                     &alternatives);
  const std::string middle_low = AddOne(low_integer);
  if (!high) {
    alternatives.push_back(Grouped(MagnitudeRange(middle_low, std::nullopt)) + " " + kAnyFraction);
    return alternatives;
  }
  const std::string middle_high = SubtractOne(high->integer_digits);
  if (CompareMagnitudes(middle_low, middle_high) <= 0) {
    alternatives.push_back(Grouped(MagnitudeRange(middle_low, middle_high)) + " " + kAnyFraction);
  }
  AppendWithFraction(high->integer_digits, FractionsAtMost(high->fraction_digits, high_exclusive),
                     &alternatives);
  return alternatives;
}

std::string JoinSigned(const std::vector<std::string>& non_negative,
                       const std::vector<std::string>& negative) {
  std::vector<std::string> alternatives = non_negative;
  if (!negative.empty()) alternatives.push_back("\"-\" " + Grouped(negative));
  return Grouped(alternatives);
}

}  // namespace

Expected<Decimal> DecimalFromJson(const nlohmann::ordered_json& value) {
  std::string text;
  if (value.is_number_unsigned()) {
    text = std::to_string(value.get<uint64_t>());
  } else if (value.is_number_integer()) {
    text = std::to_string(value.get<int64_t>());
  } else if (value.is_number_float()) {
    char buffer[512];
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value.get<double>(),
                                      std::chars_format::fixed);
    if (result.ec != std::errc()) return Error{"the number cannot be written as a decimal"};
    text.assign(buffer, result.ptr);
  } else {
    return Error{"expected a number, got " + value.dump()};
  }
  Decimal decimal;
  size_t start = 0;
  if (text[0] == '-') {
    decimal.negative = true;
    start = 1;
  }
  const size_t dot = text.find('.');
  std::string integer_digits = text.substr(start, dot == std::string::npos ? dot : dot - start);
  std::string fraction_digits = dot == std::string::npos ? "" : text.substr(dot + 1);
  integer_digits.erase(0, std::min(integer_digits.find_first_not_of('0'), integer_digits.size()));
  const size_t last_nonzero = fraction_digits.find_last_not_of('0');
  fraction_digits.erase(last_nonzero == std::string::npos ? 0 : last_nonzero + 1);
  if (integer_digits.size() + fraction_digits.size() > kMaxBoundDigits) {
    return Error{"the bound " + value.dump() + " has more than " + std::to_string(kMaxBoundDigits) +
                 " digits"};
  }
  decimal.integer_digits = integer_digits.empty() ? "0" : integer_digits;
  decimal.fraction_digits = fraction_digits;
  if (IsZero(decimal)) decimal.negative = false;
  return decimal;
}

Expected<std::string> IntegerRangeGbnf(const std::optional<NumberBound>& minimum,
                                       const std::optional<NumberBound>& maximum) {
  if (!minimum && !maximum) return std::string("(\"0\" | \"-\"? [1-9] [0-9]*)");
  std::optional<BigInteger> low;
  std::optional<BigInteger> high;
  if (minimum) low = IntegerAtLeast(minimum->value, minimum->exclusive);
  if (maximum) high = IntegerAtMost(maximum->value, maximum->exclusive);
  if (low && high && CompareIntegers(*low, *high) > 0) {
    return Error{"no integer lies within the minimum and maximum"};
  }
  std::vector<std::string> non_negative;
  if (!high || !high->negative) {
    const std::string magnitude_low = low && !low->negative ? low->digits : "0";
    std::optional<std::string> magnitude_high;
    if (high) magnitude_high = high->digits;
    non_negative = MagnitudeRange(magnitude_low, magnitude_high);
  }
  std::vector<std::string> negative;
  if (!low || low->negative) {
    const std::string magnitude_low = high && high->negative ? high->digits : "1";
    std::optional<std::string> magnitude_high;
    if (low) magnitude_high = low->digits;
    negative = MagnitudeRange(magnitude_low, magnitude_high);
  }
  return JoinSigned(non_negative, negative);
}

Expected<std::string> NumberRangeGbnf(const std::optional<NumberBound>& minimum,
                                      const std::optional<NumberBound>& maximum) {
  if (!minimum && !maximum) {
    return std::string("\"-\"? (\"0\" | [1-9] [0-9]*) (\".\" [0-9]+)? ([eE] [-+]? [0-9]+)?");
  }
  if (minimum && maximum) {
    const int order = CompareDecimals(minimum->value, maximum->value);
    if (order > 0 || (order == 0 && (minimum->exclusive || maximum->exclusive))) {
      return Error{"no number lies within the minimum and maximum"};
    }
  }
  const Decimal zero;
  // Values >= 0, written without a sign.
  std::vector<std::string> non_negative;
  if (!maximum || !maximum->value.negative) {
    const bool low_is_bound = minimum && !minimum->value.negative;
    std::optional<Decimal> high;
    if (maximum) high = maximum->value;
    non_negative = DecimalMagnitudeRange(low_is_bound ? minimum->value : zero,
                                         low_is_bound && minimum->exclusive, high,
                                         maximum && maximum->exclusive);
  }
  // Values <= 0, written as "-" and a magnitude (so -0 is accepted where 0 is).
  std::vector<std::string> negative;
  if (!minimum || minimum->value.negative || IsZero(minimum->value)) {
    const bool low_is_bound = maximum && (maximum->value.negative || IsZero(maximum->value));
    std::optional<Decimal> high;
    if (minimum) high = Negated(minimum->value);
    negative = DecimalMagnitudeRange(low_is_bound ? Negated(maximum->value) : zero,
                                     low_is_bound && maximum->exclusive, high,
                                     minimum && minimum->exclusive);
  }
  if (non_negative.empty() && negative.empty()) {
    return Error{"no number lies within the minimum and maximum"};
  }
  return JoinSigned(non_negative, negative);
}

}  // namespace vllm
