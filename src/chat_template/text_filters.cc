// The text filters. String filters first turn their input into a string (str()), as Jinja's do.
#include "chat_template/text_filters.h"

#include <algorithm>

#include "chat_template/arguments.h"
#include "chat_template/errors.h"
#include "chat_template/limits.h"
#include "chat_template/python_str.h"
#include "chat_template/str_format.h"
#include "chat_template/value_format.h"

namespace vllm::jinja {
namespace {

Value FilterCapitalize(const Value& value, const CallArgs& args, RenderBudget& budget) {
  BindArguments("capitalize", args, {});
  return Value::String(budget.WithinLimit(Capitalize(ToStr(value, budget))));
}

// markupsafe's escape: Markup stays as it is, other values are escaped and become Markup.
Value FilterEscape(const Value& value, const CallArgs& args, RenderBudget& budget) {
  BindArguments("escape", args, {});
  if (value.is_markup()) return value;
  return Value::Markup(EscapeHtml(ToStr(value, budget), budget));
}

Value FilterForceescape(const Value& value, const CallArgs& args, RenderBudget& budget) {
  BindArguments("forceescape", args, {});
  return Value::Markup(EscapeHtml(ToStr(value, budget), budget));
}

Value FilterIndent(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments(
      "indent", args,
      {{"width", Value::Int(4)}, {"first", Value::Bool(false)}, {"blank", Value::Bool(false)}});
  std::string indentation;
  if (a[0].is_string()) {
    indentation = a[0].AsString();
  } else {
    int64_t width = std::max<int64_t>(IntArgument(a[0], "indent"), 0);
    budget.CheckStringSize(static_cast<size_t>(width));
    indentation.assign(static_cast<size_t>(width), ' ');
  }
  std::vector<std::string> lines = SplitLines(ToStr(value, budget) + "\n");
  std::string out = a[1].IsTruthy() ? indentation : "";
  budget.Append(out, lines.front());
  for (size_t i = 1; i < lines.size(); ++i) {
    budget.Append(out, "\n");
    if (a[2].IsTruthy() || !lines[i].empty()) budget.Append(out, indentation);
    budget.Append(out, lines[i]);
  }
  return Value::String(std::move(out));
}

Value FilterLower(const Value& value, const CallArgs& args, RenderBudget& budget) {
  BindArguments("lower", args, {});
  return Value::String(budget.WithinLimit(ToLower(ToStr(value, budget))));
}

Value FilterReplace(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a =
      BindArguments("replace", args, {{"old"}, {"new"}, {"count", Value::None()}});
  int64_t count = a[2].is_none() ? -1 : IntArgument(a[2], "replace");
  std::string text = ToStr(value, budget);
  std::string old = ToStr(a[0], budget);
  std::string replacement = ToStr(a[1], budget);
  budget.CheckStringSize(ReplacedSize(text, old, replacement, count));
  return Value::String(Replace(text, old, replacement, count));
}

// Marks the text safe for HTML: Markup.
Value FilterSafe(const Value& value, const CallArgs& args, RenderBudget& budget) {
  BindArguments("safe", args, {});
  if (value.is_markup()) return value;
  return Value::Markup(ToStr(value, budget));
}

// str(value), but a str (Markup or not) as it is.
Value FilterString(const Value& value, const CallArgs& args, RenderBudget& budget) {
  BindArguments("string", args, {});
  if (value.is_string()) return value;
  return Value::String(ToStr(value, budget));
}

Value FilterTitle(const Value& value, const CallArgs& args, RenderBudget& budget) {
  BindArguments("title", args, {});
  // Jinja capitalizes the first character after whitespace or one of -({[< and lowers the rest.
  std::string text = ToStr(value, budget);
  std::string out;
  bool word_start = true;
  for (std::string_view c : CodePoints(text)) {
    budget.Append(out, word_start ? ToUpper(c) : ToLower(c));
    word_start = IsPythonSpace(c) ||
                 (c.size() == 1 && std::string_view("-({[<").find(c[0]) != std::string_view::npos);
  }
  return Value::String(std::move(out));
}

Value FilterTojson(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("tojson", args,
                                       {{"ensure_ascii", Value::Bool(false)},
                                        {"indent", Value::None()},
                                        {"separators", Value::None()},
                                        {"sort_keys", Value::Bool(false)}});
  JsonOptions options;
  options.ensure_ascii = a[0].IsTruthy();
  if (a[1].is_string()) {
    options.indent = a[1].AsString();
  } else if (!a[1].is_none()) {
    int64_t width = std::max<int64_t>(IntArgument(a[1], "tojson"), 0);
    budget.CheckStringSize(static_cast<size_t>(width));
    options.indent = std::string(static_cast<size_t>(width), ' ');
  }
  if (options.indent) options.item_separator = ",";
  if (!a[2].is_none()) {
    if (!a[2].is_list() || a[2].AsList().size() != 2) {
      throw RenderError("tojson() separators must be an (item, key) pair");
    }
    options.item_separator = StringArgument(a[2].AsList()[0], "tojson");
    options.key_separator = StringArgument(a[2].AsList()[1], "tojson");
  }
  options.sort_keys = a[3].IsTruthy();
  return Value::String(ToJson(value, options, budget));
}

Value FilterTrim(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("trim", args, {{"chars", Value::None()}});
  std::string text = ToStr(value, budget);
  if (a[0].is_none()) return Value::String(std::string(StripSpace(text, true, true)));
  return Value::String(std::string(StripChars(text, StringArgument(a[0], "trim"), true, true)));
}

Value FilterUpper(const Value& value, const CallArgs& args, RenderBudget& budget) {
  BindArguments("upper", args, {});
  return Value::String(budget.WithinLimit(ToUpper(ToStr(value, budget))));
}

Value FilterCenter(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("center", args, {{"width", Value::Int(80)}});
  std::string text = ToStr(value, budget);
  int64_t width = IntArgument(a[0], "center");
  auto length = static_cast<int64_t>(CodePointCount(text));
  if (width <= length) return Value::String(std::move(text));
  // str.center: the odd space goes left when the width is odd.
  auto padding = static_cast<size_t>(width - length);
  budget.CheckStringSize(text.size() + padding);
  size_t left = padding / 2 + (padding & static_cast<size_t>(width) & 1);
  return Value::String(std::string(left, ' ') + text + std::string(padding - left, ' '));
}

// `format % args`, where args are the positional arguments, or else the keyword ones.
Value FilterFormat(const Value& value, const CallArgs& args, RenderBudget& budget) {
  if (!args.positional.empty() && !args.keyword.empty()) {
    throw RenderError("can't handle positional and keyword arguments at the same time");
  }
  Value values = Value::Tuple(args.positional);
  if (!args.keyword.empty()) {
    std::vector<std::pair<Value, Value>> entries;
    for (const auto& [name, argument] : args.keyword) {
      entries.emplace_back(Value::String(name), argument);
    }
    values = Value::Dict(std::move(entries));
  }
  return Value::String(PercentFormat(ToStr(value, budget), values, budget));
}

// The text cut to `length` code points with `end` added, at a space unless killwords; text
// at most `leeway` longer than `length` stays whole.
Value FilterTruncate(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("truncate", args,
                                       {{"length", Value::Int(255)},
                                        {"killwords", Value::Bool(false)},
                                        {"end", Value::String("...")},
                                        {"leeway", Value::Int(5)}});
  std::string text = ToStr(value, budget);
  int64_t length = IntArgument(a[0], "truncate");
  const std::string& end = StringArgument(a[2], "truncate");
  auto end_length = static_cast<int64_t>(CodePointCount(end));
  int64_t leeway = a[3].is_none() ? 5 : IntArgument(a[3], "truncate");
  if (length < end_length) {
    throw RenderError("expected length >= " + std::to_string(end_length) + ", got " +
                      std::to_string(length));
  }
  if (leeway < 0) throw RenderError("expected leeway >= 0, got " + std::to_string(leeway));
  std::vector<std::string_view> chars = CodePoints(text);
  auto count = static_cast<int64_t>(chars.size());
  if (count <= length || count - length <= leeway) return Value::String(std::move(text));
  std::string kept;
  for (int64_t i = 0; i < length - end_length; ++i) kept += chars[static_cast<size_t>(i)];
  if (!a[1].IsTruthy()) kept = RSplitOn(kept, " ", 1).front();
  return Value::String(kept + end);
}

// The number of runs of word characters (letters, digits, underscores), as \w+ finds them.
Value FilterWordcount(const Value& value, const CallArgs& args, RenderBudget& budget) {
  BindArguments("wordcount", args, {});
  int64_t words = 0;
  bool in_word = false;
  std::string text = ToStr(value, budget);
  for (std::string_view c : CodePoints(text)) {
    char32_t code_point = DecodeCodePoint(c);
    bool word = code_point == '_' || IsPythonAlpha(code_point) || IsPythonNumeric(code_point);
    if (word && !in_word) ++words;
    in_word = word;
  }
  return Value::Int(words);
}

constexpr std::pair<std::string_view, FilterFunction> kTextFilters[] = {
    {"capitalize", FilterCapitalize},
    {"center", FilterCenter},
    {"e", FilterEscape},
    {"escape", FilterEscape},
    {"forceescape", FilterForceescape},
    {"format", FilterFormat},
    {"indent", FilterIndent},
    {"lower", FilterLower},
    {"replace", FilterReplace},
    {"safe", FilterSafe},
    {"string", FilterString},
    {"title", FilterTitle},
    {"tojson", FilterTojson},
    {"trim", FilterTrim},
    {"truncate", FilterTruncate},
    {"upper", FilterUpper},
    {"wordcount", FilterWordcount},
};

}  // namespace

std::span<const std::pair<std::string_view, FilterFunction>> TextFilters() { return kTextFilters; }

}  // namespace vllm::jinja
