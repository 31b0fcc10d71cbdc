// The template value type: construction, accessors, truthiness and dict lookup.
#include "chat_template/value.h"

#include <algorithm>
#include <unordered_set>

#include "chat_template/limits.h"

namespace vllm::jinja {
namespace {

// Tuples nested deeper than this compare by identity as keys, which bounds the recursion.
constexpr int kMaxKeyDepth = 64;

bool ValuesEqualAtDepth(const Value& a, const Value& b, Equality equality, RenderBudget* budget,
                        int depth) {
  if (equality == Equality::kOperator) {
    if (depth > kMaxValueDepth) throw RenderError("values nested too deeply to compare");
    budget->CountStep();
  }
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.AsDouble() == b.AsDouble();
    return a.AsInt() == b.AsInt();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ValueKind::kUndefined:
    case ValueKind::kNone:
      return true;
    case ValueKind::kString:
      return a.AsString() == b.AsString();
    case ValueKind::kList: {
      if (equality == Equality::kDictKey &&
          (!a.is_tuple() || !b.is_tuple() || depth > kMaxKeyDepth)) {
        return a.Identity() == b.Identity();
      }
      const auto& x = a.AsList();
      const auto& y = b.AsList();
      if (a.is_tuple() != b.is_tuple() || x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!ValuesEqualAtDepth(x[i], y[i], equality, budget, depth + 1)) return false;
      }
      return true;
    }
    case ValueKind::kDict: {
      if (equality == Equality::kDictKey) return a.Identity() == b.Identity();
      const auto& x = a.AsDict();
      const auto& y = b.AsDict();
      if (x.entries.size() != y.entries.size()) return false;
      for (const auto& [key, value] : x.entries) {
        const Value* other = y.Find(key);
        if (other == nullptr || !ValuesEqualAtDepth(value, *other, equality, budget, depth + 1)) {
          return false;
        }
      }
      return true;
    }
    default:
      return a.Identity() == b.Identity();
  }
}

}  // namespace

bool ValuesEqual(const Value& a, const Value& b, Equality equality, RenderBudget* budget) {
  return ValuesEqualAtDepth(a, b, equality, budget, 0);
}

Value Value::None() {
  Value v;
  v.data_ = NoneTag{};
  return v;
}

Value Value::Bool(bool value) {
  Value v;
  v.data_ = value;
  return v;
}

Value Value::Int(int64_t value) {
  Value v;
  v.data_ = value;
  return v;
}

Value Value::Float(double value) {
  Value v;
  v.data_ = value;
  return v;
}

Value Value::String(std::string value) {
  Value v;
  v.data_ = std::make_shared<const std::string>(std::move(value));
  return v;
}

Value Value::Markup(std::string value) {
  Value v;
  v.data_ = MarkupPtr{std::make_shared<const std::string>(std::move(value))};
  return v;
}

Value Value::List(std::vector<Value> items) {
  auto list = std::make_shared<ListData>();
  list->items = std::move(items);
  Value v;
  v.data_ = std::move(list);
  return v;
}

Value Value::Tuple(std::vector<Value> items) {
  Value v = List(std::move(items));
  std::get<std::shared_ptr<ListData>>(v.data_)->is_tuple = true;
  return v;
}

Value Value::Dict(std::vector<std::pair<Value, Value>> entries) {
  auto dict = std::make_shared<DictData>();
  dict->entries = std::move(entries);
  Value v;
  v.data_ = std::move(dict);
  return v;
}

Value Value::Namespace(std::vector<std::pair<Value, Value>> entries) {
  Value dict = Dict(std::move(entries));
  Value v;
  v.data_ = NamespacePtr{std::get<std::shared_ptr<DictData>>(dict.data_)};
  return v;
}

Value Value::Callable(std::string name, NativeFunction call) {
  return Method(
      std::move(name),
      [call = std::move(call)](const Value&, const CallArgs& args, RenderBudget& budget) {
        return call(args, budget);
      },
      Value());
}

Value Value::Method(std::string name, NativeMethod call, Value receiver) {
  Value v;
  v.data_ = std::make_shared<const Function>(
      Function{std::move(name), std::move(call), std::move(receiver)});
  return v;
}

bool Value::is_tuple() const {
  return is_list() && std::get<std::shared_ptr<ListData>>(data_)->is_tuple;
}

int64_t Value::AsInt() const {
  if (is_bool()) return AsBool() ? 1 : 0;
  return std::get<int64_t>(data_);
}

double Value::AsDouble() const {
  if (is_float()) return std::get<double>(data_);
  return static_cast<double>(AsInt());
}

std::vector<Value>& Value::AsList() const {
  return std::get<std::shared_ptr<ListData>>(data_)->items;
}

DictData& Value::AsDict() const {
  if (is_namespace()) return *std::get<NamespacePtr>(data_).dict;
  return *std::get<std::shared_ptr<DictData>>(data_);
}

bool Value::IsTruthy() const {
  switch (kind()) {
    case ValueKind::kUndefined:
    case ValueKind::kNone:
      return false;
    case ValueKind::kBool:
      return AsBool();
    case ValueKind::kInt:
      return AsInt() != 0;
    case ValueKind::kFloat:
      return AsDouble() != 0.0;
    case ValueKind::kString:
      return !AsString().empty();
    case ValueKind::kList:
      return !AsList().empty();
    case ValueKind::kDict:
      return !AsDict().entries.empty();
    case ValueKind::kNamespace:
    case ValueKind::kFunction:
      return true;
  }
  return false;
}

const void* Value::Identity() const {
  switch (kind()) {
    case ValueKind::kList:
      return std::get<std::shared_ptr<ListData>>(data_).get();
    case ValueKind::kDict:
    case ValueKind::kNamespace:
      return &AsDict();
    case ValueKind::kFunction:
      return std::get<FunctionPtr>(data_).get();
    default:
      return nullptr;
  }
}

bool Value::OwnsNonEmptyContainer() const {
  if (const auto* list = std::get_if<std::shared_ptr<ListData>>(&data_)) {
    return list->use_count() == 1 && !(*list)->items.empty();
  }
  const DictData* dict = nullptr;
  long owners = 0;
  if (const auto* plain = std::get_if<std::shared_ptr<DictData>>(&data_)) {
    dict = plain->get();
    owners = plain->use_count();
  } else if (const auto* ns = std::get_if<NamespacePtr>(&data_)) {
    dict = ns->dict.get();
    owners = ns->dict.use_count();
  }
  return dict != nullptr && owners == 1 && !dict->entries.empty();
}

void Value::MoveChildrenIfSoleOwner(std::vector<Value>& out) {
  auto take_entries = [&out](DictData& dict) {
    for (auto& [key, value] : dict.entries) {
      out.push_back(std::move(key));
      out.push_back(std::move(value));
    }
    dict.entries.clear();
  };
  if (auto* list = std::get_if<std::shared_ptr<ListData>>(&data_)) {
    if (list->use_count() != 1) return;
    for (auto& item : (*list)->items) out.push_back(std::move(item));
    (*list)->items.clear();
  } else if (auto* dict = std::get_if<std::shared_ptr<DictData>>(&data_)) {
    if (dict->use_count() == 1) take_entries(**dict);
  } else if (auto* ns = std::get_if<NamespacePtr>(&data_)) {
    if (ns->dict.use_count() == 1) take_entries(*ns->dict);
  }
}

void Value::DestroyIteratively(std::vector<Value> values) {
  while (!values.empty()) {
    Value last = std::move(values.back());
    values.pop_back();
    last.MoveChildrenIfSoleOwner(values);
  }  // `last` goes now, holding nothing that nests
}

// Containers that hold no last reference to a non-empty container go the ordinary way.
ListData::~ListData() {
  if (std::any_of(items.begin(), items.end(),
                  [](const Value& item) { return item.OwnsNonEmptyContainer(); })) {
    Value::DestroyIteratively(std::move(items));
  }
}

DictData::~DictData() {
  if (std::none_of(entries.begin(), entries.end(), [](const auto& entry) {
        return entry.first.OwnsNonEmptyContainer() || entry.second.OwnsNonEmptyContainer();
      })) {
    return;
  }
  std::vector<Value> values;
  values.reserve(entries.size() * 2);
  for (auto& [key, value] : entries) {
    values.push_back(std::move(key));
    values.push_back(std::move(value));
  }
  Value::DestroyIteratively(std::move(values));
}

const Value* DictData::Find(const Value& key) const {
  for (const auto& [k, v] : entries) {
    if (ValuesEqual(k, key, Equality::kDictKey, nullptr)) return &v;
  }
  return nullptr;
}

const Value* DictData::Find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k.is_string() && k.AsString() == key) return &v;
  }
  return nullptr;
}

void DictData::Set(Value key, Value value) {
  for (auto& [k, v] : entries) {
    if (ValuesEqual(k, key, Equality::kDictKey, nullptr)) {
      v = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::move(key), std::move(value));
}

bool Reaches(const Value& from, const Value& target) {
  const void* wanted = target.Identity();
  if (wanted == nullptr || from.Identity() == nullptr) return false;
  std::vector<const Value*> pending = {&from};
  std::unordered_set<const void*> visited;
  while (!pending.empty()) {
    const Value* value = pending.back();
    pending.pop_back();
    const void* identity = value->Identity();
    if (identity == nullptr || !visited.insert(identity).second) continue;
    if (identity == wanted) return true;
    if (value->is_list()) {
      for (const Value& item : value->AsList()) pending.push_back(&item);
    } else if (value->is_dict() || value->is_namespace()) {
      for (const auto& [key, item] : value->AsDict().entries) {
        pending.push_back(&key);
        pending.push_back(&item);
      }
    } else if (value->is_function()) {
      pending.push_back(&value->AsFunction().receiver);
    }
  }
  return false;
}

}  // namespace vllm::jinja
