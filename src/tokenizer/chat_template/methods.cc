// Methods of str, list and dict values. Lists are shared, so append() and pop() change the list
// every name bound to it sees.
#include "tokenizer/chat_template/methods.h"

#include <span>

#include "tokenizer/chat_template/arguments.h"
#include "tokenizer/chat_template/errors.h"
#include "tokenizer/chat_template/limits.h"
#include "tokenizer/chat_template/operators.h"
#include "tokenizer/chat_template/python_str.h"
#include "tokenizer/chat_template/value_format.h"

namespace vllm::jinja {
namespace {

using Method = Value (*)(const Value& self, const CallArgs& args, RenderBudget& budget);

struct NamedMethod {
  std::string_view name;
  Method method;
};

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

Value StrSplit(const Value& self, const CallArgs& args, RenderBudget&) {
  std::vector<Value> a =
      BindArguments("split", args, {{"sep", Value::None()}, {"maxsplit", Value::Int(-1)}});
  int64_t max_split = IntArgument(a[1], "split");
  if (a[0].is_none()) return StringList(SplitOnSpace(self.AsString(), max_split));
  const std::string& separator = StringArgument(a[0], "split");
  if (separator.empty()) throw RenderError("empty separator");
  return StringList(SplitOn(self.AsString(), separator, max_split));
}

Value StrSplitlines(const Value& self, const CallArgs& args, RenderBudget&) {
  BindArguments("splitlines", args, {});
  return StringList(SplitLines(self.AsString()));
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

Value StrReplace(const Value& self, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a =
      BindArguments("replace", args, {{"old"}, {"new"}, {"count", Value::Int(-1)}});
  const std::string& old = StringArgument(a[0], "replace");
  const std::string& replacement = StringArgument(a[1], "replace");
  int64_t count = IntArgument(a[2], "replace");
  budget.CheckStringSize(ReplacedSize(self.AsString(), old, replacement, count));
  return Value::String(Replace(self.AsString(), old, replacement, count));
}

Value StrFind(const Value& self, const CallArgs& args, RenderBudget&) {
  std::vector<Value> a = BindArguments("find", args, {{"sub"}});
  return Value::Int(Find(self.AsString(), StringArgument(a[0], "find")));
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

Value DictItems(const Value& self, const CallArgs& args, RenderBudget&) {
  BindArguments("items", args, {});
  std::vector<Value> pairs;
  for (const auto& [key, value] : self.AsDict().entries)
    pairs.push_back(Value::Tuple({key, value}));
  return Value::List(std::move(pairs));
}

Value DictKeys(const Value& self, const CallArgs& args, RenderBudget&) {
  BindArguments("keys", args, {});
  return Value::List(Iterate(self));
}

Value DictValues(const Value& self, const CallArgs& args, RenderBudget&) {
  BindArguments("values", args, {});
  std::vector<Value> values;
  for (const auto& entry : self.AsDict().entries) values.push_back(entry.second);
  return Value::List(std::move(values));
}

Value DictGet(const Value& self, const CallArgs& args, RenderBudget&) {
  std::vector<Value> a = BindArguments("get", args, {{"key"}, {"default", Value::None()}});
  const Value* found = self.AsDict().Find(a[0]);
  return found ? *found : a[1];
}

// Lists are shared by reference, and a list inside itself would never be freed.
void CheckNoCycle(const Value& list, const Value& item) {
  if (Reaches(item, list)) throw RenderError("cannot put a list inside itself");
}

Value ListAppend(const Value& self, const CallArgs& args, RenderBudget&) {
  std::vector<Value> a = BindArguments("append", args, {{"object"}});
  CheckNoCycle(self, a[0]);
  auto& items = self.AsList();
  CheckListSize(items.size() + 1);
  items.push_back(std::move(a[0]));
  return Value::None();
}

Value ListExtend(const Value& self, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("extend", args, {{"iterable"}});
  std::vector<Value> more = Iterate(a[0]);
  for (const Value& item : more) {
    budget.CountStep();
    CheckNoCycle(self, item);
  }
  auto& items = self.AsList();
  CheckListSize(items.size() + more.size());
  items.insert(items.end(), more.begin(), more.end());
  return Value::None();
}

Value ListPop(const Value& self, const CallArgs& args, RenderBudget&) {
  std::vector<Value> a = BindArguments("pop", args, {{"index", Value::Int(-1)}});
  auto& items = self.AsList();
  if (items.empty()) throw RenderError("pop from empty list");
  int64_t index = IntArgument(a[0], "pop");
  if (index < 0) index += static_cast<int64_t>(items.size());
  if (index < 0 || index >= static_cast<int64_t>(items.size()))
    throw RenderError("pop index out of range");
  Value popped = std::move(items[static_cast<size_t>(index)]);
  items.erase(items.begin() + index);
  return popped;
}

Value ListIndex(const Value& self, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("index", args, {{"value"}});
  const auto& items = self.AsList();
  for (size_t i = 0; i < items.size(); ++i) {
    if (Equals(items[i], a[0], budget)) return Value::Int(static_cast<int64_t>(i));
  }
  throw RenderError(ToRepr(a[0], budget) + " is not in list");
}

Value ListCount(const Value& self, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("count", args, {{"value"}});
  int64_t count = 0;
  for (const Value& item : self.AsList()) count += Equals(item, a[0], budget) ? 1 : 0;
  return Value::Int(count);
}

constexpr NamedMethod kStringMethods[] = {
    {"strip", StrStrip},       {"lstrip", StrLstrip},         {"rstrip", StrRstrip},
    {"split", StrSplit},       {"splitlines", StrSplitlines}, {"startswith", StrStartswith},
    {"endswith", StrEndswith}, {"upper", StrUpper},           {"lower", StrLower},
    {"title", StrTitle},       {"capitalize", StrCapitalize}, {"replace", StrReplace},
    {"find", StrFind},         {"count", StrCount},           {"join", StrJoin},
};
constexpr NamedMethod kDictMethods[] = {
    {"items", DictItems},
    {"keys", DictKeys},
    {"values", DictValues},
    {"get", DictGet},
};
constexpr NamedMethod kListMethods[] = {
    {"append", ListAppend}, {"extend", ListExtend}, {"pop", ListPop},
    {"index", ListIndex},   {"count", ListCount},
};
constexpr NamedMethod kTupleMethods[] = {{"index", ListIndex}, {"count", ListCount}};

std::span<const NamedMethod> MethodsOf(const Value& value) {
  switch (value.kind()) {
    case ValueKind::kString:
      return kStringMethods;
    case ValueKind::kDict:
      return kDictMethods;
    case ValueKind::kList:
      if (value.is_tuple()) return kTupleMethods;
      return kListMethods;
    default:
      return {};
  }
}

}  // namespace

std::optional<Value> GetMethod(const Value& receiver, std::string_view name) {
  for (const NamedMethod& entry : MethodsOf(receiver)) {
    if (entry.name != name) continue;
    return Value::Method(std::string(name), entry.method, receiver);
  }
  return std::nullopt;
}

}  // namespace vllm::jinja
