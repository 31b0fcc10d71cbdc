// Jinja's builtin filters as Jinja 3.1 defines them (sort/min/max/unique ignore case unless told
// otherwise), and the table of all filters, text_filters.h's included.
#include "chat_template/filters.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "chat_template/arguments.h"
#include "chat_template/errors.h"
#include "chat_template/limits.h"
#include "chat_template/operators.h"
#include "chat_template/predicates.h"
#include "chat_template/python_str.h"
#include "chat_template/text_filters.h"
#include "chat_template/value_format.h"

namespace vllm::jinja {
namespace {

// An `attribute=` argument: "a.b.0" reads item a, then b, then index 0; an int reads that index.
Value AttributePath(const Value& item, const Value& attribute) {
  if (attribute.is_integral()) return Subscript(item, attribute);
  Value current = item;
  for (const std::string& part : SplitOn(StringArgument(attribute, "attribute"), ".", -1)) {
    int64_t index = 0;
    auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), index);
    bool is_index =
        !part.empty() && part[0] != '-' && error == std::errc() && end == part.data() + part.size();
    current = Subscript(current, is_index ? Value::Int(index) : Value::String(part));
  }
  return current;
}

// What sort, min, max and unique compare: the item or its attribute, lowercased unless
// case_sensitive.
Value SortKey(const Value& item, bool case_sensitive, const Value& attribute) {
  Value key = attribute.is_none() ? item : AttributePath(item, attribute);
  if (!case_sensitive && key.is_string()) return Value::String(ToLower(key.AsString()));
  return key;
}

// Removes underscores that Python allows between digits ("1_000"); nullopt for misplaced ones.
std::optional<std::string> WithoutDigitUnderscores(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '_') {
      out += text[i];
      continue;
    }
    auto is_digit_or_letter = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0;
    };
    if (i == 0 || i + 1 == text.size() || !is_digit_or_letter(text[i - 1]) ||
        !is_digit_or_letter(text[i + 1])) {
      return std::nullopt;
    }
  }
  return out;
}

// Python's float(text).
std::optional<double> ParseFloat(std::string_view text) {
  auto cleaned = WithoutDigitUnderscores(StripSpace(text, true, true));
  if (!cleaned || cleaned->empty()) return std::nullopt;
  std::string_view s = *cleaned;
  bool negative = s.front() == '-';
  if (s.front() == '-' || s.front() == '+') s.remove_prefix(1);
  double value = 0;
  auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (error != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return negative ? -value : value;
}

// Python's int(text, base) for bases 2 to 36, with 0x/0o/0b prefixes where the base matches.
std::optional<int64_t> ParseInt(std::string_view text, int64_t base) {
  auto cleaned = WithoutDigitUnderscores(StripSpace(text, true, true));
  if (!cleaned || cleaned->empty() || base < 2 || base > 36) return std::nullopt;
  std::string_view s = *cleaned;
  bool negative = s.front() == '-';
  if (s.front() == '-' || s.front() == '+') s.remove_prefix(1);
  if (s.size() > 2 && s[0] == '0') {
    char prefix = static_cast<char>(std::tolower(static_cast<unsigned char>(s[1])));
    if ((prefix == 'x' && base == 16) || (prefix == 'o' && base == 8) ||
        (prefix == 'b' && base == 2)) {
      s.remove_prefix(2);
    }
  }
  if (s.empty() || s.front() == '-' || s.front() == '+') return std::nullopt;
  uint64_t magnitude = 0;
  auto [end, error] =
      std::from_chars(s.data(), s.data() + s.size(), magnitude, static_cast<int>(base));
  if (error != std::errc() || end != s.data() + s.size()) return std::nullopt;
  if (magnitude > static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0)) return std::nullopt;
  return negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
}

Value FilterAbs(const Value& value, const CallArgs& args, RenderBudget&) {
  BindArguments("abs", args, {});
  if (value.is_float()) return Value::Float(std::fabs(value.AsDouble()));
  if (value.is_integral()) return value.AsInt() < 0 ? Negate(value) : Value::Int(value.AsInt());
  throw RenderError("bad operand type for abs(): '" + TypeName(value) + "'");
}

Value FilterAttr(const Value& value, const CallArgs& args, RenderBudget&) {
  std::vector<Value> a = BindArguments("attr", args, {{"name"}});
  return Attribute(value, StringArgument(a[0], "attr"));
}

Value FilterDefault(const Value& value, const CallArgs& args, RenderBudget&) {
  std::vector<Value> a = BindArguments(
      "default", args, {{"default_value", Value::String("")}, {"boolean", Value::Bool(false)}});
  bool use_default = value.is_undefined() || (a[1].IsTruthy() && !value.IsTruthy());
  return use_default ? a[0] : value;
}

Value FilterDictsort(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("dictsort", args,
                                       {{"case_sensitive", Value::Bool(false)},
                                        {"by", Value::String("key")},
                                        {"reverse", Value::Bool(false)}});
  if (!value.is_dict()) throw RenderError("dictsort expects a dict, not " + TypeName(value));
  const std::string& by = StringArgument(a[1], "dictsort");
  if (by != "key" && by != "value")
    throw RenderError("You can only sort by either 'key' or 'value'");
  size_t position = by == "key" ? 0 : 1;
  bool case_sensitive = a[0].IsTruthy();
  std::vector<Value> pairs;
  for (const auto& [key, item] : value.AsDict().entries) pairs.push_back(Value::Tuple({key, item}));
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
    return LessThan(SortKey(x.AsList()[position], case_sensitive, Value::None()),
                    SortKey(y.AsList()[position], case_sensitive, Value::None()), budget);
  });
  if (a[2].IsTruthy()) std::reverse(pairs.begin(), pairs.end());
  return Value::List(std::move(pairs));
}

Value FilterFirst(const Value& value, const CallArgs& args, RenderBudget&) {
  BindArguments("first", args, {});
  if (value.is_list()) return value.AsList().empty() ? Value() : value.AsList().front();
  std::vector<Value> items = Iterate(value);
  return items.empty() ? Value() : items.front();
}

Value FilterLast(const Value& value, const CallArgs& args, RenderBudget&) {
  BindArguments("last", args, {});
  if (value.is_list()) return value.AsList().empty() ? Value() : value.AsList().back();
  std::vector<Value> items = Iterate(value);
  return items.empty() ? Value() : items.back();
}

Value FilterFloat(const Value& value, const CallArgs& args, RenderBudget&) {
  std::vector<Value> a = BindArguments("float", args, {{"default", Value::Float(0.0)}});
  if (value.is_number()) return Value::Float(value.AsDouble());
  if (value.is_string()) {
    if (auto parsed = ParseFloat(value.AsString())) return Value::Float(*parsed);
  }
  return a[0];
}

Value FilterInt(const Value& value, const CallArgs& args, RenderBudget&) {
  std::vector<Value> a =
      BindArguments("int", args, {{"default", Value::Int(0)}, {"base", Value::Int(10)}});
  if (value.is_integral()) return Value::Int(value.AsInt());
  std::optional<double> number;
  if (value.is_float()) number = value.AsDouble();
  if (value.is_string()) {
    if (auto parsed = ParseInt(value.AsString(), IntArgument(a[1], "int")))
      return Value::Int(*parsed);
    number = ParseFloat(value.AsString());
  }
  if (number && std::isfinite(*number) && std::fabs(*number) < 9.2e18) {
    return Value::Int(static_cast<int64_t>(std::trunc(*number)));
  }
  return a[0];
}

Value FilterItems(const Value& value, const CallArgs& args, RenderBudget&) {
  BindArguments("items", args, {});
  if (value.is_undefined()) return Value::List({});
  if (!value.is_dict()) throw RenderError("Can only get item pairs from a mapping.");
  std::vector<Value> pairs;
  for (const auto& [key, item] : value.AsDict().entries) pairs.push_back(Value::Tuple({key, item}));
  return Value::List(std::move(pairs));
}

Value FilterJoin(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a =
      BindArguments("join", args, {{"d", Value::String("")}, {"attribute", Value::None()}});
  std::string separator = ToStr(a[0], budget);
  std::string out;
  bool first = true;
  for (const Value& item : Iterate(value)) {
    budget.CountStep();
    if (!first) budget.Append(out, separator);
    first = false;
    budget.Append(out, ToStr(a[1].is_none() ? item : AttributePath(item, a[1]), budget));
  }
  return Value::String(std::move(out));
}

Value FilterLength(const Value& value, const CallArgs& args, RenderBudget&) {
  BindArguments("length", args, {});
  return Value::Int(Length(value));
}

Value FilterList(const Value& value, const CallArgs& args, RenderBudget&) {
  BindArguments("list", args, {});
  return Value::List(Iterate(value));
}

// Jinja's map and select family give nothing for a false value (None, "", []...).
std::vector<Value> ItemsUnlessFalse(const Value& value) {
  return value.IsTruthy() ? Iterate(value) : std::vector<Value>{};
}

Value FilterMap(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> out;
  const Value* attribute = nullptr;
  Value default_value;
  for (const auto& [name, argument] : args.keyword) {
    if (name == "attribute") {
      attribute = &argument;
    } else if (name == "default") {
      default_value = argument;
    }
  }
  if (attribute != nullptr) {
    for (const Value& item : ItemsUnlessFalse(value)) {
      budget.CountStep();
      Value mapped = AttributePath(item, *attribute);
      out.push_back(mapped.is_undefined() ? default_value : mapped);
    }
    return Value::List(std::move(out));
  }
  if (args.positional.empty()) throw RenderError("map() needs a filter name or attribute=");
  const std::string& filter = StringArgument(args.positional[0], "map");
  CallArgs filter_args{{args.positional.begin() + 1, args.positional.end()}, args.keyword};
  for (const Value& item : ItemsUnlessFalse(value)) {
    budget.CountStep();
    out.push_back(ApplyFilter(filter, item, filter_args, budget));
  }
  return Value::List(std::move(out));
}

Value Extreme(const Value& value, const CallArgs& args, RenderBudget& budget, std::string_view name,
              bool want_max) {
  std::vector<Value> a = BindArguments(
      name, args, {{"case_sensitive", Value::Bool(false)}, {"attribute", Value::None()}});
  std::vector<Value> items = Iterate(value);
  if (items.empty()) return Value();
  bool case_sensitive = a[0].IsTruthy();
  size_t best = 0;
  Value best_key = SortKey(items[0], case_sensitive, a[1]);
  for (size_t i = 1; i < items.size(); ++i) {
    Value key = SortKey(items[i], case_sensitive, a[1]);
    if (want_max ? LessThan(best_key, key, budget) : LessThan(key, best_key, budget)) {
      best = i;
      best_key = std::move(key);
    }
  }
  return items[best];
}

Value FilterMax(const Value& value, const CallArgs& args, RenderBudget& budget) {
  return Extreme(value, args, budget, "max", true);
}
Value FilterMin(const Value& value, const CallArgs& args, RenderBudget& budget) {
  return Extreme(value, args, budget, "min", false);
}

// select / reject / selectattr / rejectattr: keep the items whose test (or truthiness) matches.
Value Select(const Value& value, const CallArgs& args, RenderBudget& budget, bool by_attribute,
             bool keep_passing) {
  size_t next = 0;
  Value attribute;
  if (by_attribute) {
    if (args.positional.empty()) throw RenderError("selectattr/rejectattr need an attribute name");
    attribute = args.positional[next++];
  }
  std::optional<std::string> test;
  CallArgs test_args;
  if (next < args.positional.size()) {
    test = StringArgument(args.positional[next++], "select");
    test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(next),
                                args.positional.end());
    test_args.keyword = args.keyword;
  }
  std::vector<Value> out;
  for (const Value& item : ItemsUnlessFalse(value)) {
    budget.CountStep();
    Value subject = by_attribute ? AttributePath(item, attribute) : item;
    bool passes = test ? ApplyTest(*test, subject, test_args, budget) : subject.IsTruthy();
    if (passes == keep_passing) out.push_back(item);
  }
  return Value::List(std::move(out));
}

Value FilterSelect(const Value& value, const CallArgs& args, RenderBudget& budget) {
  return Select(value, args, budget, false, true);
}
Value FilterReject(const Value& value, const CallArgs& args, RenderBudget& budget) {
  return Select(value, args, budget, false, false);
}
Value FilterSelectattr(const Value& value, const CallArgs& args, RenderBudget& budget) {
  return Select(value, args, budget, true, true);
}
Value FilterRejectattr(const Value& value, const CallArgs& args, RenderBudget& budget) {
  return Select(value, args, budget, true, false);
}

// The items in lists of `count`, the last one filled up with `fill_with` unless that is None.
Value FilterBatch(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a =
      BindArguments("batch", args, {{"linecount"}, {"fill_with", Value::None()}});
  int64_t count = IntArgument(a[0], "batch");
  if (count < 1) throw RenderError("batch() needs a count of at least 1");
  std::vector<Value> batches;
  std::vector<Value> batch;
  for (const Value& item : Iterate(value)) {
    budget.CountStep();
    batch.push_back(item);
    if (static_cast<int64_t>(batch.size()) == count) {
      batches.push_back(Value::List(std::move(batch)));
      batch.clear();
    }
  }
  if (!batch.empty()) {
    if (!a[1].is_none()) {
      CheckListSize(static_cast<size_t>(count));
      batch.resize(static_cast<size_t>(count), a[1]);
    }
    batches.push_back(Value::List(std::move(batch)));
  }
  return Value::List(std::move(batches));
}

// The items in `slices` lists, the first ones longer by one where they do not divide evenly;
// with `fill_with`, the shorter ones get it added.
Value FilterSlice(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("slice", args, {{"slices"}, {"fill_with", Value::None()}});
  int64_t slices = IntArgument(a[0], "slice");
  if (slices < 1) throw RenderError("slice() needs at least 1 slice");
  CheckListSize(static_cast<size_t>(slices));
  std::vector<Value> items = Iterate(value);
  auto length = static_cast<int64_t>(items.size());
  int64_t per_slice = length / slices;
  int64_t with_extra = length % slices;
  std::vector<Value> out;
  int64_t start = 0;
  for (int64_t i = 0; i < slices; ++i) {
    budget.CountStep();
    int64_t end = start + per_slice + (i < with_extra ? 1 : 0);
    std::vector<Value> slice(items.begin() + start, items.begin() + end);
    if (!a[1].is_none() && i >= with_extra) slice.push_back(a[1]);
    out.push_back(Value::List(std::move(slice)));
    start = end;
  }
  return Value::List(std::move(out));
}

Value FilterReverse(const Value& value, const CallArgs& args, RenderBudget&) {
  BindArguments("reverse", args, {});
  if (value.is_string()) {
    std::vector<std::string_view> chars = CodePoints(value.AsString());
    std::string out;
    for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += *it;
    return Value::String(std::move(out));
  }
  std::vector<Value> items = Iterate(value);
  std::reverse(items.begin(), items.end());
  return Value::List(std::move(items));
}

Value FilterRound(const Value& value, const CallArgs& args, RenderBudget&) {
  std::vector<Value> a = BindArguments(
      "round", args, {{"precision", Value::Int(0)}, {"method", Value::String("common")}});
  int64_t precision = IntArgument(a[0], "round");
  const std::string& method = StringArgument(a[1], "round");
  if (method != "common" && method != "ceil" && method != "floor") {
    throw RenderError("method must be common, ceil or floor");
  }
  if (!value.is_number()) throw RenderError("round() expects a number, not " + TypeName(value));
  double x = value.AsDouble();
  double scale = std::pow(10.0, static_cast<double>(precision));
  if (method != "common") {
    return Value::Float((method == "ceil" ? std::ceil(x * scale) : std::floor(x * scale)) / scale);
  }
  if (value.is_integral() && precision >= 0) return Value::Int(value.AsInt());
  if (!std::isfinite(x) || precision > 330) return value;
  if (precision < 0) {
    double rounded = std::nearbyint(x * scale) / scale;
    return value.is_integral() ? Value::Int(static_cast<int64_t>(rounded)) : Value::Float(rounded);
  }
  // Correctly rounded decimal text, half to even on the exact binary value, as Python rounds.
  char buffer[720];
  auto written = std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::fixed,
                               static_cast<int>(precision));
  double rounded = x;
  std::from_chars(buffer, written.ptr, rounded);
  return Value::Float(rounded);
}

Value FilterSort(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("sort", args,
                                       {{"reverse", Value::Bool(false)},
                                        {"case_sensitive", Value::Bool(false)},
                                        {"attribute", Value::None()}});
  std::vector<Value> items = Iterate(value);
  bool case_sensitive = a[1].IsTruthy();
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    return LessThan(SortKey(x, case_sensitive, a[2]), SortKey(y, case_sensitive, a[2]), budget);
  });
  if (a[0].IsTruthy()) std::reverse(items.begin(), items.end());
  return Value::List(std::move(items));
}

Value FilterSum(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a =
      BindArguments("sum", args, {{"attribute", Value::None()}, {"start", Value::Int(0)}});
  Value total = a[1];
  for (const Value& item : Iterate(value)) {
    budget.CountStep();
    total = ApplyBinary(BinaryOp::kAdd, total, a[0].is_none() ? item : AttributePath(item, a[0]),
                        budget);
  }
  return total;
}

Value FilterUnique(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments(
      "unique", args, {{"case_sensitive", Value::Bool(false)}, {"attribute", Value::None()}});
  std::vector<Value> out;
  std::vector<Value> seen;
  for (const Value& item : Iterate(value)) {
    Value key = SortKey(item, a[0].IsTruthy(), a[1]);
    if (std::any_of(seen.begin(), seen.end(),
                    [&](const Value& s) { return Equals(s, key, budget); }))
      continue;
    seen.push_back(std::move(key));
    out.push_back(item);
  }
  return Value::List(std::move(out));
}

std::unordered_map<std::string_view, FilterFunction> BuildFilters() {
  std::unordered_map<std::string_view, FilterFunction> filters{
      {"abs", FilterAbs},           {"attr", FilterAttr},
      {"batch", FilterBatch},       {"count", FilterLength},
      {"d", FilterDefault},         {"default", FilterDefault},
      {"dictsort", FilterDictsort}, {"first", FilterFirst},
      {"float", FilterFloat},       {"int", FilterInt},
      {"items", FilterItems},       {"join", FilterJoin},
      {"last", FilterLast},         {"length", FilterLength},
      {"list", FilterList},         {"map", FilterMap},
      {"max", FilterMax},           {"min", FilterMin},
      {"reject", FilterReject},     {"rejectattr", FilterRejectattr},
      {"reverse", FilterReverse},   {"round", FilterRound},
      {"select", FilterSelect},     {"selectattr", FilterSelectattr},
      {"slice", FilterSlice},       {"sort", FilterSort},
      {"sum", FilterSum},           {"unique", FilterUnique},
  };
  for (const auto& [name, filter] : TextFilters()) filters.emplace(name, filter);
  return filters;
}

const std::unordered_map<std::string_view, FilterFunction>& Filters() {
  static const std::unordered_map<std::string_view, FilterFunction> filters = BuildFilters();
  return filters;
}

}  // namespace

bool IsFilter(std::string_view name) { return Filters().contains(name); }

Value ApplyFilter(std::string_view name, const Value& value, const CallArgs& args,
                  RenderBudget& budget) {
  auto found = Filters().find(name);
  if (found == Filters().end()) throw RenderError("no filter named '" + std::string(name) + "'");
  return found->second(value, args, budget);
}

}  // namespace vllm::jinja
