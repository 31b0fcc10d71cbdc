// Methods of list and dict values, and str_methods.h's of str values. Lists are shared, so
// append() and pop() change the list every name bound to it sees.
#include "chat_template/methods.h"

#include <span>

#include "chat_template/arguments.h"
#include "chat_template/errors.h"
#include "chat_template/limits.h"
#include "chat_template/operators.h"
#include "chat_template/str_methods.h"
#include "chat_template/value_format.h"

namespace vllm::jinja {
namespace {

struct NamedMethod {
  std::string_view name;
  MethodFunction method;
};

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
    case ValueKind::kDict:
      return kDictMethods;
    case ValueKind::kList:
      if (value.is_tuple()) return kTupleMethods;
      return kListMethods;
    default:
      return {};
  }
}

MethodFunction FindMethod(const Value& receiver, std::string_view name) {
  if (receiver.is_string()) return FindStringMethod(name);
  for (const NamedMethod& entry : MethodsOf(receiver)) {
    if (entry.name == name) return entry.method;
  }
  return nullptr;
}

}  // namespace

std::optional<Value> GetMethod(const Value& receiver, std::string_view name) {
  MethodFunction method = FindMethod(receiver, name);
  if (method == nullptr) return std::nullopt;
  return Value::Method(std::string(name), method, receiver);
}

}  // namespace vllm::jinja
