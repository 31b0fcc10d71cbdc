// printf-style formatting and str.format, each conversion or field handed to FormatWithSpec.
#include "chat_template/str_format.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "chat_template/errors.h"
#include "chat_template/format_spec.h"
#include "chat_template/limits.h"
#include "chat_template/operators.h"
#include "chat_template/python_str.h"
#include "chat_template/value_format.h"

namespace vllm::jinja {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The digits at `at` as a number, nullopt when there are none; moves `at` past them.
std::optional<int64_t> ReadNumber(std::string_view text, size_t& at) {
  if (at >= text.size() || !IsDigit(text[at])) return std::nullopt;
  int64_t number = 0;
  while (at < text.size() && IsDigit(text[at])) {
    if (number > (INT64_MAX - 9) / 10) throw RenderError("number too big in format string");
    number = number * 10 + (text[at++] - '0');
  }
  return number;
}

// The value of a '*' width or precision.
int64_t StarArgument(const Value& value) {
  if (!value.is_integral()) throw RenderError("* wants int");
  return value.AsInt();
}

// One printf-style conversion of `value`; `spec` holds its flags, width and precision.
std::string Convert(char conversion, const Value& value, FormatSpec spec, bool zero,
                    const RenderBudget& budget) {
  bool numeric = std::string_view("diuxXoeEfFgG").find(conversion) != std::string_view::npos;
  if (numeric && zero && spec.align != '<') {
    spec.align = '=';
    spec.fill = "0";
  }
  if (std::string_view("diuxXo").find(conversion) != std::string_view::npos) {
    spec.min_digits = spec.precision.value_or(0);
    spec.precision.reset();
  }
  switch (conversion) {
    case 's':
    case 'r':
    case 'a':
    case 'c': {
      std::string text;
      if (conversion == 's') {
        text = ToStr(value, budget);
      } else if (conversion == 'r') {
        text = ToRepr(value, budget);
      } else if (conversion == 'a') {
        text = AsciiRepr(value, budget);
      } else if (value.is_integral() && value.AsInt() >= 0 && value.AsInt() <= 0x10FFFF) {
        AppendUtf8(static_cast<char32_t>(value.AsInt()), &text);
        spec.precision.reset();
      } else if (value.is_string() && CodePointCount(value.AsString()) == 1) {
        text = value.AsString();
        spec.precision.reset();
      } else {
        throw RenderError("%c requires an int in range(0x110000) or a unicode character, not " +
                          TypeName(value));
      }
      spec.sign = '\0';
      spec.alternate = false;
      return FormatWithSpec(Value::String(std::move(text)), spec, budget);
    }
    case 'd':
    case 'i':
    case 'u': {
      if (!value.is_number()) {
        throw RenderError(std::string("%") + conversion +
                          " format: a real number is required, not " + TypeName(value));
      }
      double number = value.AsDouble();
      if (value.is_float() && !(std::fabs(number) < 9.2e18)) {
        throw RenderError("float " + ToStr(value, budget) + " does not fit a 64-bit integer");
      }
      Value integer = value.is_float() ? Value::Int(static_cast<int64_t>(std::trunc(number)))
                                       : Value::Int(value.AsInt());
      spec.type = 'd';
      return FormatWithSpec(integer, spec, budget);
    }
    case 'x':
    case 'X':
    case 'o':
      if (!value.is_integral()) {
        throw RenderError(std::string("%") + conversion + " format: an integer is required, not " +
                          TypeName(value));
      }
      spec.type = conversion;
      return FormatWithSpec(Value::Int(value.AsInt()), spec, budget);
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G':
      if (!value.is_number()) throw RenderError("must be real number, not " + TypeName(value));
      spec.type = conversion;
      if (!spec.precision) spec.precision = 6;
      return FormatWithSpec(Value::Float(value.AsDouble()), spec, budget);
    default:
      throw RenderError(std::string("unsupported format character '") + conversion + "'");
  }
}

// Reads `%(key)` at `at`, just past the '(', up to its matching ')'.
std::string ReadMappingKey(std::string_view format, size_t& at) {
  size_t start = at;
  int depth = 1;
  for (; at < format.size() && depth > 0; ++at) {
    if (format[at] == '(') ++depth;
    if (format[at] == ')') --depth;
  }
  if (depth > 0) throw RenderError("incomplete format key");
  return std::string(format.substr(start, at - 1 - start));
}

// The value a str.format() field names: an argument, then its .attribute and [key] lookups.
class FieldResolver {
 public:
  explicit FieldResolver(const CallArgs& args) : args_(args) {}

  Value Resolve(std::string_view field) {
    size_t end = field.find_first_of(".[");
    if (end == std::string_view::npos) end = field.size();
    Value value = Argument(field.substr(0, end));
    while (end < field.size()) {
      if (value.is_undefined()) {
        throw RenderError("format field '" + std::string(field) +
                          "' reads into an undefined value");
      }
      if (field[end] == '.') {
        size_t next = field.find_first_of(".[", end + 1);
        if (next == std::string_view::npos) next = field.size();
        if (next == end + 1) throw RenderError("Empty attribute in format string");
        value = Attribute(value, field.substr(end + 1, next - end - 1));
        end = next;
      } else if (field[end] == '[') {
        size_t close = field.find(']', end);
        if (close == std::string_view::npos) throw RenderError("Missing ']' in format string");
        std::string_view key = field.substr(end + 1, close - end - 1);
        if (key.empty()) throw RenderError("Empty attribute in format string");
        size_t at = 0;
        std::optional<int64_t> index = ReadNumber(key, at);
        value = Subscript(value, index && at == key.size() ? Value::Int(*index)
                                                           : Value::String(std::string(key)));
        end = close + 1;
      } else {
        throw RenderError("Only '.' or '[' may follow ']' in format field specifier");
      }
    }
    return value;
  }

 private:
  Value Argument(std::string_view name) {
    size_t at = 0;
    std::optional<int64_t> index = ReadNumber(name, at);
    if (name.empty() || (index && at == name.size())) {
      bool automatic = name.empty();
      if (numbering_ != Numbering::kNone && (numbering_ == Numbering::kAutomatic) != automatic) {
        throw RenderError(automatic ? "cannot switch from manual field specification to "
                                      "automatic field numbering"
                                    : "cannot switch from automatic field numbering to manual "
                                      "field specification");
      }
      numbering_ = automatic ? Numbering::kAutomatic : Numbering::kManual;
      int64_t position = automatic ? next_++ : *index;
      if (position >= static_cast<int64_t>(args_.positional.size())) {
        throw RenderError("Replacement index " + std::to_string(position) +
                          " out of range for positional args tuple");
      }
      return args_.positional[static_cast<size_t>(position)];
    }
    for (const auto& [keyword, value] : args_.keyword) {
      if (keyword == name) return value;
    }
    throw RenderError("'" + std::string(name) + "'");
  }

  enum class Numbering { kNone, kAutomatic, kManual };
  const CallArgs& args_;
  Numbering numbering_ = Numbering::kNone;
  int64_t next_ = 0;
};

}  // namespace

std::string PercentFormat(std::string_view format, const Value& args, const RenderBudget& budget) {
  bool is_mapping = args.is_dict();
  std::vector<Value> positional = args.is_tuple() ? args.AsList() : std::vector<Value>{args};
  size_t next = 0;
  auto take = [&]() -> const Value& {
    if (next >= positional.size()) throw RenderError("not enough arguments for format string");
    return positional[next++];
  };
  std::string out;
  size_t at = 0;
  while (at < format.size()) {
    size_t percent = format.find('%', at);
    if (percent == std::string_view::npos) percent = format.size();
    budget.Append(out, format.substr(at, percent - at));
    if (percent == format.size()) break;
    at = percent + 1;
    std::optional<Value> keyed;
    if (at < format.size() && format[at] == '(') {
      if (!is_mapping) throw RenderError("format requires a mapping");
      std::string key = ReadMappingKey(format, ++at);
      const Value* found = args.AsDict().Find(key);
      if (found == nullptr) throw RenderError("'" + key + "'");
      keyed = *found;
    }
    FormatSpec spec;
    spec.align = '>';
    bool zero = false;
    for (;
         at < format.size() && std::string_view("-+ #0").find(format[at]) != std::string_view::npos;
         ++at) {
      char flag = format[at];
      if (flag == '-') spec.align = '<';
      if (flag == '+' || (flag == ' ' && spec.sign != '+')) spec.sign = flag;
      if (flag == '#') spec.alternate = true;
      if (flag == '0') zero = true;
    }
    if (at < format.size() && format[at] == '*') {
      ++at;
      spec.width = StarArgument(take());
      if (spec.width < 0) {
        spec.align = '<';
        spec.width = spec.width == INT64_MIN ? INT64_MAX : -spec.width;
      }
    } else {
      spec.width = ReadNumber(format, at).value_or(0);
    }
    if (at < format.size() && format[at] == '.') {
      ++at;
      if (at < format.size() && format[at] == '*') {
        ++at;
        spec.precision = std::max<int64_t>(StarArgument(take()), 0);
      } else {
        spec.precision = ReadNumber(format, at).value_or(0);
      }
    }
    while (at < format.size() && (format[at] == 'h' || format[at] == 'l' || format[at] == 'L')) {
      ++at;
    }
    if (at >= format.size()) throw RenderError("incomplete format");
    char conversion = format[at++];
    if (conversion == '%') {
      budget.Append(out, "%");
      continue;
    }
    budget.Append(out, Convert(conversion, keyed ? *keyed : take(), spec, zero, budget));
  }
  if (!is_mapping && next < positional.size()) {
    throw RenderError("not all arguments converted during string formatting");
  }
  return out;
}

std::string BraceFormat(std::string_view format, const CallArgs& args, const RenderBudget& budget) {
  FieldResolver resolver(args);
  std::string out;
  size_t at = 0;
  while (at < format.size()) {
    size_t brace = format.find_first_of("{}", at);
    if (brace == std::string_view::npos) brace = format.size();
    budget.Append(out, format.substr(at, brace - at));
    if (brace == format.size()) break;
    if (brace + 1 < format.size() && format[brace + 1] == format[brace]) {  // {{ or }}
      budget.Append(out, format.substr(brace, 1));
      at = brace + 2;
      continue;
    }
    if (format[brace] == '}') throw RenderError("Single '}' encountered in format string");
    // The field runs to the first '}' outside [brackets].
    size_t end = brace + 1;
    while (end < format.size() && format[end] != '}') {
      if (format[end] == '{') throw RenderError("nested format fields are not supported");
      if (format[end] == '[') end = std::min(format.find(']', end), format.size() - 1);
      ++end;
    }
    if (end >= format.size()) throw RenderError("expected '}' before end of string");
    std::string_view field = format.substr(brace + 1, end - brace - 1);
    at = end + 1;
    size_t name_end =
        field.find_first_of("!:", field.find('[') == std::string_view::npos ? 0 : field.rfind(']'));
    if (name_end == std::string_view::npos) name_end = field.size();
    Value value = resolver.Resolve(field.substr(0, name_end));
    std::string_view spec = field.substr(name_end);
    if (spec.starts_with("!")) {
      if (spec.size() < 2)
        throw RenderError("end of string while looking for conversion specifier");
      char conversion = spec[1];
      if (spec.size() > 2 && spec[2] != ':') {
        throw RenderError("expected ':' after conversion specifier");
      }
      if (conversion == 's') {
        value = Value::String(ToStr(value, budget));
      } else if (conversion == 'r') {
        value = Value::String(ToRepr(value, budget));
      } else if (conversion == 'a') {
        value = Value::String(AsciiRepr(value, budget));
      } else {
        throw RenderError(std::string("Unknown conversion specifier ") + conversion);
      }
      spec.remove_prefix(2);
    }
    if (spec.starts_with(":")) spec.remove_prefix(1);
    budget.Append(out, FormatWithSpec(value, ParseFormatSpec(spec), budget));
  }
  return out;
}

}  // namespace vllm::jinja
