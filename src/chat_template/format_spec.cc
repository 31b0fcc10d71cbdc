// format(value, spec) as CPython implements it for str, int and float (Objects/stringlib
// /unicode_format.h and Python/pystrtod.c), with C's printf for the digits of floats.
#include "chat_template/format_spec.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "chat_template/errors.h"
#include "chat_template/limits.h"
#include "chat_template/operators.h"
#include "chat_template/python_str.h"
#include "chat_template/value_format.h"

namespace vllm::jinja {
namespace {

bool IsAlign(char c) { return c == '<' || c == '>' || c == '^' || c == '='; }

// The number written at `at` (0 when no digit is there); moves `at` past its digits.
int64_t ReadNumber(std::string_view text, size_t& at) {
  int64_t number = 0;
  while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
    if (number > (INT64_MAX - 9) / 10)
      throw RenderError("Too many decimal digits in format string");
    number = number * 10 + (text[at++] - '0');
  }
  return number;
}

bool IsEmpty(const FormatSpec& spec) {
  return spec.align == '\0' && spec.sign == '\0' && !spec.alternate && !spec.zero &&
         spec.width == 0 && spec.grouping == '\0' && !spec.precision && spec.type == '\0';
}

[[noreturn]] void ThrowUnknownCode(char type, std::string_view type_name) {
  throw RenderError("Unknown format code '" + std::string(1, type) + "' for object of type '" +
                    std::string(type_name) + "'");
}

// `prefix` (sign and 0x) and `body` padded to the spec's width; '=' pads between them.
std::string Pad(const std::string& prefix, const std::string& body, const FormatSpec& spec,
                char default_align, const RenderBudget& budget) {
  char align = spec.align;
  if (align == '\0') align = spec.zero && default_align == '>' ? '=' : default_align;
  size_t length = CodePointCount(prefix) + CodePointCount(body);
  size_t width = static_cast<size_t>(spec.width);
  if (width <= length) return budget.WithinLimit(prefix + body);
  size_t padding = width - length;
  budget.CheckStringSize(padding);
  budget.CheckStringSize(prefix.size() + body.size() + padding * spec.fill.size());
  auto fill = [&](size_t count) {
    std::string out;
    for (size_t i = 0; i < count; ++i) out += spec.fill;
    return out;
  };
  switch (align) {
    case '<':
      return prefix + body + fill(padding);
    case '^':
      return fill(padding / 2) + prefix + body + fill(padding - padding / 2);
    case '=':
      return prefix + fill(padding) + body;
    default:
      return fill(padding) + prefix + body;
  }
}

// `digits` with `separator` between groups of `every`, counted from the right.
std::string Group(std::string_view digits, char separator, size_t every) {
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % every == 0) out += separator;
    out += digits[i];
  }
  return out;
}

std::string SignOf(bool negative, const FormatSpec& spec) {
  if (negative) return "-";
  return spec.sign == '+' || spec.sign == ' ' ? std::string(1, spec.sign) : "";
}

std::string FormatString(const std::string& text, const FormatSpec& spec,
                         const RenderBudget& budget) {
  if (spec.type != '\0' && spec.type != 's') ThrowUnknownCode(spec.type, "str");
  if (spec.sign != '\0') throw RenderError("Sign not allowed in string format specifier");
  if (spec.alternate) {
    throw RenderError("Alternate form (#) not allowed in string format specifier");
  }
  if (spec.align == '=') throw RenderError("'=' alignment not allowed in string format specifier");
  if (spec.grouping != '\0') {
    throw RenderError(std::string("Cannot specify '") + spec.grouping + "' with 's'.");
  }
  if (!spec.precision) return Pad("", text, spec, '<', budget);
  std::vector<std::string_view> chars = CodePoints(text);
  std::string kept;
  for (size_t i = 0; i < chars.size() && i < static_cast<size_t>(*spec.precision); ++i) {
    kept += chars[i];
  }
  return Pad("", kept, spec, '<', budget);
}

std::string FormatInteger(int64_t value, const FormatSpec& spec, const RenderBudget& budget) {
  char type = spec.type == '\0' ? 'd' : spec.type;
  if (spec.precision) throw RenderError("Precision not allowed in integer format specifier");
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  if (type == 'c') {
    if (spec.sign != '\0' || spec.alternate) {
      throw RenderError(
          "Sign and alternate form (#) not allowed with integer format specifier 'c'");
    }
    if (value < 0 || value > 0x10FFFF) throw RenderError("%c arg not in range(0x110000)");
    std::string character;
    AppendUtf8(static_cast<char32_t>(value), &character);
    return Pad("", character, spec, '>', budget);
  }
  int base = 10;
  std::string prefix;
  switch (type) {
    case 'd':
    case 'n':
      break;
    case 'x':
    case 'X':
      base = 16;
      prefix = type == 'x' ? "0x" : "0X";
      break;
    case 'o':
      base = 8;
      prefix = "0o";
      break;
    case 'b':
      base = 2;
      prefix = "0b";
      break;
    default:
      ThrowUnknownCode(type, "int");
  }
  std::string digits;
  do {
    digits.insert(digits.begin(), "0123456789abcdef"[magnitude % static_cast<unsigned>(base)]);
    magnitude /= static_cast<unsigned>(base);
  } while (magnitude > 0);
  if (type == 'X') digits = ToUpper(digits);
  if (static_cast<int64_t>(digits.size()) < spec.min_digits) {
    budget.CheckStringSize(static_cast<size_t>(spec.min_digits));
    digits.insert(0, static_cast<size_t>(spec.min_digits) - digits.size(), '0');
  }
  if (spec.grouping != '\0') {
    if (type == 'n' || (base != 10 && spec.grouping == ',')) {
      throw RenderError(std::string("Cannot specify ',' with '") + type + "'.");
    }
    digits = Group(digits, spec.grouping, base == 10 ? 3 : 4);
  }
  return Pad(SignOf(value < 0, spec) + (spec.alternate ? prefix : ""), digits, spec, '>', budget);
}

// C's printf of one double with a precision.
std::string Printf(const char* format, int64_t precision, double value) {
  int size = std::snprintf(nullptr, 0, format, static_cast<int>(precision), value);
  std::string out(static_cast<size_t>(size) + 1, '\0');
  std::snprintf(out.data(), out.size(), format, static_cast<int>(precision), value);
  out.resize(static_cast<size_t>(size));
  return out;
}

// Drops the zeros that end the fraction of `number`, and then a bare point.
void TrimFraction(std::string& number) {
  if (number.find('.') == std::string::npos) return;
  while (number.back() == '0') number.pop_back();
  if (number.back() == '.') number.pop_back();
}

// The 'g' presentation of a finite value >= 0 with `precision` significant digits; with
// `add_dot_0` (the spec without a type) integers keep ".0" and exponents start a digit sooner.
std::string FormatGeneral(double value, int64_t precision, bool add_dot_0, bool keep_zeros,
                          bool upper) {
  if (precision == 0) precision = 1;
  std::string scientific = Printf("%.*e", precision - 1, value);
  size_t e = scientific.find('e');
  int64_t exponent = std::stoll(scientific.substr(e + 1));
  if (exponent < -4 || exponent >= (add_dot_0 ? precision - 1 : precision)) {
    std::string mantissa = scientific.substr(0, e);
    if (!keep_zeros) TrimFraction(mantissa);
    return mantissa + (upper ? "E" : "e") + scientific.substr(e + 1);
  }
  std::string fixed = Printf("%.*f", precision - 1 - exponent, value);
  if (!keep_zeros) TrimFraction(fixed);
  if (add_dot_0 && fixed.find('.') == std::string::npos) fixed += ".0";
  return fixed;
}

std::string FormatFloat(double value, const FormatSpec& spec, const RenderBudget& budget) {
  char type = spec.type == 'n' ? 'g' : spec.type;
  if (std::string_view("eEfFgG%").find(type) == std::string_view::npos && type != '\0') {
    ThrowUnknownCode(type, "float");
  }
  bool upper = type == 'E' || type == 'F' || type == 'G';
  double magnitude = std::fabs(value);
  int64_t precision = spec.precision.value_or(6);
  // printf's digits of a double run to the precision and 330 more at most.
  if (precision > std::numeric_limits<int>::max() - 400) throw RenderError("precision too big");
  budget.CheckStringSize(static_cast<size_t>(precision));
  std::string body;
  if (std::isnan(value) || std::isinf(value)) {
    body = std::isnan(value) ? "nan" : "inf";
    if (upper) body = ToUpper(body);
    if (type == '%') body += "%";
  } else if (type == '\0' && !spec.precision) {
    body = ToRepr(Value::Float(magnitude), budget);
  } else if (type == 'f' || type == 'F') {
    body = Printf(spec.alternate ? "%#.*f" : "%.*f", precision, magnitude);
  } else if (type == 'e' || type == 'E') {
    body = Printf(spec.alternate ? (upper ? "%#.*E" : "%#.*e") : (upper ? "%.*E" : "%.*e"),
                  precision, magnitude);
  } else if (type == '%') {
    body = Printf(spec.alternate ? "%#.*f" : "%.*f", precision, magnitude * 100) + "%";
  } else {
    body = FormatGeneral(magnitude, precision, type == '\0', spec.alternate, upper);
  }
  if (spec.alternate && body.find('.') == std::string::npos && std::isfinite(value)) {
    body.insert(std::min(body.find_first_of("eE%"), body.size()), ".");  // '#' keeps the point
  }
  if (spec.grouping != '\0') {
    if (spec.type == 'n')
      throw RenderError(std::string("Cannot specify '") + spec.grouping + "' with 'n'.");
    size_t integer_end = body.find_first_not_of("0123456789");
    if (integer_end == std::string::npos) integer_end = body.size();
    body = Group(body.substr(0, integer_end), spec.grouping, 3) + body.substr(integer_end);
  }
  return Pad(SignOf(std::signbit(value), spec), body, spec, '>', budget);
}

}  // namespace

FormatSpec ParseFormatSpec(std::string_view text) {
  FormatSpec spec;
  size_t at = 0;
  std::vector<std::string_view> chars = CodePoints(text.substr(0, 8));
  bool fill_given = chars.size() >= 2 && chars[1].size() == 1 && IsAlign(chars[1][0]);
  if (fill_given) {
    spec.fill = std::string(chars[0]);
    spec.align = chars[1][0];
    at = chars[0].size() + 1;
  } else if (!text.empty() && IsAlign(text[0])) {
    spec.align = text[at++];
  }
  if (at < text.size() && (text[at] == '+' || text[at] == '-' || text[at] == ' ')) {
    spec.sign = text[at++];
  }
  if (at < text.size() && text[at] == '#') {
    spec.alternate = true;
    ++at;
  }
  if (at < text.size() && text[at] == '0') {
    ++at;
    if (!fill_given) {  // '0' pads with zeros unless a fill is given
      spec.fill = "0";
      spec.zero = true;
    }
  }
  spec.width = ReadNumber(text, at);
  if (at < text.size() && (text[at] == ',' || text[at] == '_')) spec.grouping = text[at++];
  if (at < text.size() && text[at] == '.') {
    size_t digits = ++at;
    spec.precision = ReadNumber(text, at);
    if (at == digits) throw RenderError("Format specifier missing precision");
  }
  if (at < text.size()) spec.type = text[at++];
  if (at != text.size()) {
    throw RenderError("Invalid format specifier '" + std::string(text) + "'");
  }
  return spec;
}

std::string FormatWithSpec(const Value& value, const FormatSpec& spec, const RenderBudget& budget) {
  switch (value.kind()) {
    case ValueKind::kString:
      return FormatString(value.AsString(), spec, budget);
    case ValueKind::kBool:
      if (IsEmpty(spec)) return ToStr(value, budget);
      [[fallthrough]];
    case ValueKind::kInt:
      if (std::string_view("eEfFgG%").find(spec.type) != std::string_view::npos) {
        return FormatFloat(value.AsDouble(), spec, budget);
      }
      return FormatInteger(value.AsInt(), spec, budget);
    case ValueKind::kFloat:
      return FormatFloat(value.AsDouble(), spec, budget);
    default:
      if (!IsEmpty(spec)) {
        throw RenderError("unsupported format string passed to " + TypeName(value) + ".__format__");
      }
      return ToStr(value, budget);
  }
}

std::string AsciiRepr(const Value& value, const RenderBudget& budget) {
  std::string repr = ToRepr(value, budget);
  std::string out;
  for (std::string_view bytes : CodePoints(repr)) {
    char32_t c = DecodeCodePoint(bytes);
    if (c < 0x80) {
      out += bytes;
      continue;
    }
    char escape[16];
    if (c < 0x100) {
      std::snprintf(escape, sizeof escape, "\\x%02x", static_cast<unsigned>(c));
    } else if (c < 0x10000) {
      std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
    } else {
      std::snprintf(escape, sizeof escape, "\\U%08x", static_cast<unsigned>(c));
    }
    budget.Append(out, escape);
  }
  return out;
}

}  // namespace vllm::jinja
