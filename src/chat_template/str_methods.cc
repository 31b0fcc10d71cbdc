// The str methods, each checking its arguments as Python does, with ICU for character classes.
#include "chat_template/str_methods.h"

#include <unicode/uchar.h>

#include <algorithm>

#include "chat_template/arguments.h"
#include "chat_template/errors.h"
#include "chat_template/limits.h"
#include "chat_template/operators.h"
#include "chat_template/python_str.h"
#include "chat_template/str_format.h"

namespace vllm::jinja {
namespace {

Value StringList(std::vector<std::string> pieces) {
  std::vector<Value> items;
  items.reserve(pieces.size());
  for (auto& piece : pieces) items.push_back(Value::String(std::move(piece)));
  return Value::List(std::move(items));
}

Value Strip(const Value& self, const CallArgs& args, std::string_view name, bool left, bool right) {
  std::vector<Value> a = BindArguments(name, args, {{"chars", Value::None()}});
  std::string_view text = self.AsString();
  if (a[0].is_none()) return Value::String(std::string(StripSpace(text, left, right)));
  return Value::String(std::string(StripChars(text, StringArgument(a[0], name), left, right)));
}

Value StrStrip(const Value& self, const CallArgs& args, RenderBudget&) {
  return Strip(self, args, "strip", true, true);
}
Value StrLstrip(const Value& self, const CallArgs& args, RenderBudget&) {
  return Strip(self, args, "lstrip", true, false);
}
Value StrRstrip(const Value& self, const CallArgs& args, RenderBudget&) {
  return Strip(self, args, "rstrip", false, true);
}

// split / rsplit.
Value Split(const Value& self, const CallArgs& args, std::string_view name, bool from_right) {
  std::vector<Value> a =
      BindArguments(name, args, {{"sep", Value::None()}, {"maxsplit", Value::Int(-1)}});
  int64_t max_split = IntArgument(a[1], name);
  if (a[0].is_none()) {
    return StringList(from_right ? RSplitOnSpace(self.AsString(), max_split)
                                 : SplitOnSpace(self.AsString(), max_split));
  }
  const std::string& separator = StringArgument(a[0], name);
  if (separator.empty()) throw RenderError("empty separator");
  return StringList(from_right ? RSplitOn(self.AsString(), separator, max_split)
                               : SplitOn(self.AsString(), separator, max_split));
}

Value StrSplit(const Value& self, const CallArgs& args, RenderBudget&) {
  return Split(self, args, "split", false);
}
Value StrRsplit(const Value& self, const CallArgs& args, RenderBudget&) {
  return Split(self, args, "rsplit", true);
}

Value StrSplitlines(const Value& self, const CallArgs& args, RenderBudget&) {
  BindArguments("splitlines", args, {});
  return StringList(SplitLines(self.AsString()));
}

// partition / rpartition: (before, separator, after) around the first or last separator.
Value Partition(const Value& self, const CallArgs& args, std::string_view name, bool from_right) {
  std::vector<Value> a = BindArguments(name, args, {{"sep"}});
  const std::string& separator = StringArgument(a[0], name);
  if (separator.empty()) throw RenderError("empty separator");
  std::string_view text = self.AsString();
  size_t found = from_right ? text.rfind(separator) : text.find(separator);
  if (found == std::string_view::npos) {
    Value empty = Value::String("");
    return from_right ? Value::Tuple({empty, empty, self}) : Value::Tuple({self, empty, empty});
  }
  return Value::Tuple({Value::String(std::string(text.substr(0, found))), a[0],
                       Value::String(std::string(text.substr(found + separator.size())))});
}

Value StrPartition(const Value& self, const CallArgs& args, RenderBudget&) {
  return Partition(self, args, "partition", false);
}
Value StrRpartition(const Value& self, const CallArgs& args, RenderBudget&) {
  return Partition(self, args, "rpartition", true);
}

// startswith / endswith: the argument is a string or a tuple of strings.
Value Affix(const Value& self, const CallArgs& args, std::string_view name, bool at_start) {
  std::vector<Value> a = BindArguments(name, args, {{"affix"}});
  std::string_view text = self.AsString();
  auto matches = [&](const Value& affix) {
    std::string_view s = StringArgument(affix, name);
    return at_start ? text.starts_with(s) : text.ends_with(s);
  };
  if (a[0].is_tuple()) {
    for (const Value& affix : a[0].AsList()) {
      if (matches(affix)) return Value::Bool(true);
    }
    return Value::Bool(false);
  }
  return Value::Bool(matches(a[0]));
}

Value StrStartswith(const Value& self, const CallArgs& args, RenderBudget&) {
  return Affix(self, args, "startswith", true);
}
Value StrEndswith(const Value& self, const CallArgs& args, RenderBudget&) {
  return Affix(self, args, "endswith", false);
}

// removeprefix / removesuffix.
Value RemoveAffix(const Value& self, const CallArgs& args, std::string_view name, bool at_start) {
  std::vector<Value> a = BindArguments(name, args, {{"affix"}});
  std::string_view text = self.AsString();
  std::string_view affix = StringArgument(a[0], name);
  if (at_start && text.starts_with(affix)) text.remove_prefix(affix.size());
  if (!at_start && text.ends_with(affix)) text.remove_suffix(affix.size());
  return Value::String(std::string(text));
}

Value StrRemoveprefix(const Value& self, const CallArgs& args, RenderBudget&) {
  return RemoveAffix(self, args, "removeprefix", true);
}
Value StrRemovesuffix(const Value& self, const CallArgs& args, RenderBudget&) {
  return RemoveAffix(self, args, "removesuffix", false);
}

Value StrUpper(const Value& self, const CallArgs& args, RenderBudget& budget) {
  BindArguments("upper", args, {});
  return Value::String(budget.WithinLimit(ToUpper(self.AsString())));
}

Value StrLower(const Value& self, const CallArgs& args, RenderBudget& budget) {
  BindArguments("lower", args, {});
  return Value::String(budget.WithinLimit(ToLower(self.AsString())));
}

Value StrTitle(const Value& self, const CallArgs& args, RenderBudget& budget) {
  BindArguments("title", args, {});
  return Value::String(budget.WithinLimit(TitleCase(self.AsString())));
}

Value StrCapitalize(const Value& self, const CallArgs& args, RenderBudget& budget) {
  BindArguments("capitalize", args, {});
  return Value::String(budget.WithinLimit(Capitalize(self.AsString())));
}

Value StrSwapcase(const Value& self, const CallArgs& args, RenderBudget& budget) {
  BindArguments("swapcase", args, {});
  std::string out;
  for (std::string_view c : CodePoints(self.AsString())) {
    auto code_point = static_cast<UChar32>(DecodeCodePoint(c));
    if (u_isUUppercase(code_point)) {
      budget.Append(out, ToLower(c));
    } else if (u_isULowercase(code_point)) {
      budget.Append(out, ToUpper(c));
    } else {
      budget.Append(out, c);
    }
  }
  return Value::String(std::move(out));
}

// Whether `text` is not empty and each of its code points passes `test`.
template <typename Test>
bool AllCodePoints(std::string_view text, Test test) {
  std::vector<std::string_view> chars = CodePoints(text);
  return !chars.empty() && std::all_of(chars.begin(), chars.end(), [&](std::string_view c) {
    return test(DecodeCodePoint(c));
  });
}

bool IsAlnum(char32_t c) { return IsPythonAlpha(c) || IsPythonNumeric(c); }
bool IsSpace(char32_t c) {
  std::string bytes;
  AppendUtf8(c, &bytes);
  return IsPythonSpace(bytes);
}
bool IsAscii(char32_t c) { return c < 0x80; }

// A str method that tests every code point.
template <bool (*Test)(char32_t)>
Value AllOf(const Value& self, const CallArgs& args, RenderBudget&) {
  BindArguments("test", args, {});
  return Value::Bool(AllCodePoints(self.AsString(), Test));
}

Value StrIsascii(const Value& self, const CallArgs& args, RenderBudget&) {
  BindArguments("isascii", args, {});
  return Value::Bool(AllCodePoints(self.AsString(), IsAscii) || self.AsString().empty());
}

// islower / isupper: some code point has the case, and none has the other one (or titlecase).
Value CaseTest(const Value& self, const CallArgs& args, std::string_view name, bool lower) {
  BindArguments(name, args, {});
  bool cased = false;
  for (std::string_view c : CodePoints(self.AsString())) {
    auto code_point = static_cast<UChar32>(DecodeCodePoint(c));
    bool has_case = lower ? u_isULowercase(code_point) : u_isUUppercase(code_point);
    bool has_other =
        u_istitle(code_point) || (lower ? u_isUUppercase(code_point) : u_isULowercase(code_point));
    if (has_other) return Value::Bool(false);
    cased = cased || has_case;
  }
  return Value::Bool(cased);
}

Value StrIslower(const Value& self, const CallArgs& args, RenderBudget&) {
  return CaseTest(self, args, "islower", true);
}
Value StrIsupper(const Value& self, const CallArgs& args, RenderBudget&) {
  return CaseTest(self, args, "isupper", false);
}

// Uppercase and titlecase code points only after uncased ones, lowercase only after cased ones.
Value StrIstitle(const Value& self, const CallArgs& args, RenderBudget&) {
  BindArguments("istitle", args, {});
  bool previous_cased = false;
  bool cased = false;
  for (std::string_view c : CodePoints(self.AsString())) {
    auto code_point = static_cast<UChar32>(DecodeCodePoint(c));
    if (u_isUUppercase(code_point) || u_istitle(code_point)) {
      if (previous_cased) return Value::Bool(false);
      previous_cased = cased = true;
    } else if (u_isULowercase(code_point)) {
      if (!previous_cased) return Value::Bool(false);
      previous_cased = cased = true;
    } else {
      previous_cased = false;
    }
  }
  return Value::Bool(cased);
}

// center / ljust / rjust: `side` is where the text goes.
Value Justify(const Value& self, const CallArgs& args, std::string_view name, char side,
              RenderBudget& budget) {
  std::vector<Value> a = BindArguments(name, args, {{"width"}, {"fillchar", Value::String(" ")}});
  int64_t width = IntArgument(a[0], name);
  const std::string& fill = StringArgument(a[1], name);
  if (CodePointCount(fill) != 1) {
    throw RenderError("The fill character must be exactly one character long");
  }
  const std::string& text = self.AsString();
  auto length = static_cast<int64_t>(CodePointCount(text));
  if (width <= length) return self;
  auto padding = static_cast<size_t>(width - length);
  budget.CheckStringSize(padding);
  budget.CheckStringSize(text.size() + padding * fill.size());
  size_t left = side == '<'   ? 0
                : side == '>' ? padding
                              : padding / 2 + (padding & static_cast<size_t>(width) & 1);
  std::string out;
  for (size_t i = 0; i < left; ++i) out += fill;
  out += text;
  for (size_t i = left; i < padding; ++i) out += fill;
  return Value::String(std::move(out));
}

Value StrCenter(const Value& self, const CallArgs& args, RenderBudget& budget) {
  return Justify(self, args, "center", '^', budget);
}
Value StrLjust(const Value& self, const CallArgs& args, RenderBudget& budget) {
  return Justify(self, args, "ljust", '<', budget);
}
Value StrRjust(const Value& self, const CallArgs& args, RenderBudget& budget) {
  return Justify(self, args, "rjust", '>', budget);
}

// Pads with zeros to `width`, after a leading sign.
Value StrZfill(const Value& self, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("zfill", args, {{"width"}});
  int64_t width = IntArgument(a[0], "zfill");
  const std::string& text = self.AsString();
  auto length = static_cast<int64_t>(CodePointCount(text));
  if (width <= length) return self;
  auto padding = static_cast<size_t>(width - length);
  budget.CheckStringSize(text.size() + padding);
  size_t sign = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  return Value::String(text.substr(0, sign) + std::string(padding, '0') + text.substr(sign));
}

Value StrReplace(const Value& self, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a =
      BindArguments("replace", args, {{"old"}, {"new"}, {"count", Value::Int(-1)}});
  const std::string& old = StringArgument(a[0], "replace");
  const std::string& replacement = StringArgument(a[1], "replace");
  int64_t count = IntArgument(a[2], "replace");
  budget.CheckStringSize(ReplacedSize(self.AsString(), old, replacement, count));
  return Value::String(Replace(self.AsString(), old, replacement, count));
}

// find / rfind / index / rindex: index and rindex fail where find and rfind give -1.
Value Search(const Value& self, const CallArgs& args, std::string_view name, bool from_right,
             bool must_find) {
  std::vector<Value> a = BindArguments(name, args, {{"sub"}});
  const std::string& sub = StringArgument(a[0], name);
  int64_t found = from_right ? RFind(self.AsString(), sub) : Find(self.AsString(), sub);
  if (must_find && found < 0) throw RenderError("substring not found");
  return Value::Int(found);
}

Value StrFind(const Value& self, const CallArgs& args, RenderBudget&) {
  return Search(self, args, "find", false, false);
}
Value StrRfind(const Value& self, const CallArgs& args, RenderBudget&) {
  return Search(self, args, "rfind", true, false);
}
Value StrIndex(const Value& self, const CallArgs& args, RenderBudget&) {
  return Search(self, args, "index", false, true);
}
Value StrRindex(const Value& self, const CallArgs& args, RenderBudget&) {
  return Search(self, args, "rindex", true, true);
}

Value StrCount(const Value& self, const CallArgs& args, RenderBudget&) {
  std::vector<Value> a = BindArguments("count", args, {{"sub"}});
  return Value::Int(CountOccurrences(self.AsString(), StringArgument(a[0], "count")));
}

Value StrJoin(const Value& self, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("join", args, {{"iterable"}});
  std::vector<Value> items = Iterate(a[0]);
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    budget.CountStep();
    if (!items[i].is_string()) {
      throw RenderError("sequence item " + std::to_string(i) + ": expected str instance, " +
                        TypeName(items[i]) + " found");
    }
    if (i > 0) budget.Append(out, self.AsString());
    budget.Append(out, items[i].AsString());
  }
  return Value::String(std::move(out));
}

Value StrFormat(const Value& self, const CallArgs& args, RenderBudget& budget) {
  return Value::String(BraceFormat(self.AsString(), args, budget));
}

struct NamedMethod {
  std::string_view name;
  MethodFunction method;
};

constexpr NamedMethod kStringMethods[] = {
    {"strip", StrStrip},
    {"lstrip", StrLstrip},
    {"rstrip", StrRstrip},
    {"split", StrSplit},
    {"rsplit", StrRsplit},
    {"splitlines", StrSplitlines},
    {"partition", StrPartition},
    {"rpartition", StrRpartition},
    {"startswith", StrStartswith},
    {"endswith", StrEndswith},
    {"removeprefix", StrRemoveprefix},
    {"removesuffix", StrRemovesuffix},
    {"upper", StrUpper},
    {"lower", StrLower},
    {"title", StrTitle},
    {"capitalize", StrCapitalize},
    {"swapcase", StrSwapcase},
    {"isalpha", AllOf<IsPythonAlpha>},
    {"isdecimal", AllOf<IsPythonDecimal>},
    {"isdigit", AllOf<IsPythonDigit>},
    {"isnumeric", AllOf<IsPythonNumeric>},
    {"isalnum", AllOf<IsAlnum>},
    {"isspace", AllOf<IsSpace>},
    {"isascii", StrIsascii},
    {"islower", StrIslower},
    {"isupper", StrIsupper},
    {"istitle", StrIstitle},
    {"center", StrCenter},
    {"ljust", StrLjust},
    {"rjust", StrRjust},
    {"zfill", StrZfill},
    {"replace", StrReplace},
    {"find", StrFind},
    {"rfind", StrRfind},
    {"index", StrIndex},
    {"rindex", StrRindex},
    {"count", StrCount},
    {"join", StrJoin},
    {"format", StrFormat},
};

}  // namespace

MethodFunction FindStringMethod(std::string_view name) {
  for (const NamedMethod& entry : kStringMethods) {
    if (entry.name == name) return entry.method;
  }
  return nullptr;
}

}  // namespace vllm::jinja
