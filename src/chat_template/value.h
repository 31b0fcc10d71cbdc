// The values templates compute with, as Python sees them: undefined, None, bool, int, float, str,
// list and tuple, dict, namespace and functions. Lists, dicts and namespaces are shared by
// reference like Python objects (so `xs.append(x)` is seen through every name bound to xs);
// strings are immutable and shared.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace vllm::jinja {

class Value;
struct CallArgs;
struct Function;
struct ListData;
struct DictData;
class RenderBudget;

// Callables get the budget of the rendering that calls them, to count their steps and bound the
// strings they build.
using NativeFunction = std::function<Value(const CallArgs& args, RenderBudget& budget)>;
using NativeMethod =
    std::function<Value(const Value& receiver, const CallArgs& args, RenderBudget& budget)>;

// In the order of the alternatives Value holds.
enum class ValueKind {
  kUndefined,
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kList,
  kDict,
  kNamespace,
  kFunction
};

class Value {
 public:
  Value() = default;  // undefined
  static Value None();
  static Value Bool(bool value);
  static Value Int(int64_t value);
  static Value Float(double value);
  static Value String(std::string value);
  // A str marked safe for HTML (markupsafe's Markup, made by the safe and escape filters): `+`
  // with a plain str escapes the plain one. It is a str in every other way.
  static Value Markup(std::string value);
  static Value List(std::vector<Value> items);
  static Value Tuple(std::vector<Value> items);
  // The keys must be distinct (DictData::Set keeps them so).
  static Value Dict(std::vector<std::pair<Value, Value>> entries = {});
  static Value Namespace(std::vector<std::pair<Value, Value>> entries = {});
  static Value Callable(std::string name, NativeFunction call);
  // `receiver.name`, a method bound to its receiver.
  static Value Method(std::string name, NativeMethod call, Value receiver);

  ValueKind kind() const {
    size_t index = data_.index();
    return index == kMarkupIndex ? ValueKind::kString : static_cast<ValueKind>(index);
  }
  bool is_undefined() const { return kind() == ValueKind::kUndefined; }
  bool is_none() const { return kind() == ValueKind::kNone; }
  bool is_bool() const { return kind() == ValueKind::kBool; }
  bool is_int() const { return kind() == ValueKind::kInt; }
  bool is_float() const { return kind() == ValueKind::kFloat; }
  bool is_string() const { return kind() == ValueKind::kString; }
  bool is_markup() const { return data_.index() == kMarkupIndex; }
  bool is_list() const { return kind() == ValueKind::kList; }  // list or tuple
  bool is_dict() const { return kind() == ValueKind::kDict; }
  bool is_namespace() const { return kind() == ValueKind::kNamespace; }
  bool is_function() const { return kind() == ValueKind::kFunction; }
  // bool, int or float: Python's numbers (True + 1 == 2).
  bool is_number() const { return is_bool() || is_int() || is_float(); }
  // bool or int.
  bool is_integral() const { return is_bool() || is_int(); }
  bool is_tuple() const;

  bool AsBool() const { return std::get<bool>(data_); }
  // The integer of a bool or int.
  int64_t AsInt() const;
  // The number of a bool, int or float.
  double AsDouble() const;
  const std::string& AsString() const {
    if (const auto* markup = std::get_if<MarkupPtr>(&data_)) return *markup->text;
    return *std::get<StringPtr>(data_);
  }
  // The items of a list or tuple.
  std::vector<Value>& AsList() const;
  // The entries of a dict or namespace.
  DictData& AsDict() const;
  const Function& AsFunction() const { return *std::get<FunctionPtr>(data_); }

  // Python truthiness: empty containers, zero, None and undefined are false.
  bool IsTruthy() const;
  // The object behind a list, dict, namespace or function, for identity tests; nullptr otherwise.
  const void* Identity() const;

 private:
  friend struct ListData;
  friend struct DictData;

  struct UndefinedTag {};
  struct NoneTag {};
  struct NamespacePtr {
    std::shared_ptr<DictData> dict;
  };
  using StringPtr = std::shared_ptr<const std::string>;
  using FunctionPtr = std::shared_ptr<const Function>;
  struct MarkupPtr {
    StringPtr text;
  };
  // The alternative after those of ValueKind's order.
  static constexpr size_t kMarkupIndex = static_cast<size_t>(ValueKind::kFunction) + 1;

  // Whether destroying this value would destroy a non-empty list, dict or namespace.
  bool OwnsNonEmptyContainer() const;
  // Moves the items of a container this value alone holds into `out`.
  void MoveChildrenIfSoleOwner(std::vector<Value>& out);
  // Destroys values whose lists and dicts nest arbitrarily deep without deep recursion.
  static void DestroyIteratively(std::vector<Value> values);

  std::variant<UndefinedTag, NoneTag, bool, int64_t, double, StringPtr, std::shared_ptr<ListData>,
               std::shared_ptr<DictData>, NamespacePtr, FunctionPtr, MarkupPtr>
      data_;
};

// The arguments of a call: positional ones, then keyword ones in the order written.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

// A callable value: a builtin, a macro, or a method bound to its receiver.
struct Function {
  std::string name;
  NativeMethod call;
  Value receiver;  // undefined unless this is a bound method

  Value Call(const CallArgs& args, RenderBudget& budget) const {
    return call(receiver, args, budget);
  }
};

struct ListData {
  std::vector<Value> items;
  bool is_tuple = false;
  ~ListData();
};

// A dict in insertion order, as Python keeps it. Keys compare as Python dict keys do
// (1 == 1.0 == True); lookups are linear, which suits the small dicts of chat messages.
struct DictData {
  std::vector<std::pair<Value, Value>> entries;

  const Value* Find(const Value& key) const;
  const Value* Find(std::string_view key) const;
  void Set(Value key, Value value);
  ~DictData();
};

// What ValuesEqual compares item by item. A template's `==` compares lists, tuples and dicts
// so; a dict key compares only tuples so, and a list or dict key matches only itself (Python
// refuses them as keys, being unhashable).
enum class Equality { kOperator, kDictKey };

// Python's == over template values, the one definition behind `==`, `in`, tests, filters
// (operators.h's Equals) and dict keys: numbers by value (True == 1 == 1.0, NaN equal to
// nothing), strings by content, containers as `equality` says, anything else by identity. For
// kOperator each pair compared counts a step of `budget` and nesting deeper than kMaxValueDepth
// throws RenderError; kDictKey needs no budget (nullptr) and compares tuple keys nested deeper
// than 64 by identity, which bounds the recursion.
bool ValuesEqual(const Value& a, const Value& b, Equality equality, RenderBudget* budget);

// Whether `target` (a list, dict or namespace) is `from` or can be reached from it through
// items, entries and method receivers; putting it inside `from` would then make a cycle.
bool Reaches(const Value& from, const Value& target);

}  // namespace vllm::jinja
