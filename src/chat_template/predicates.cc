// Jinja's builtin tests, with its rules on types: True is a number but not an integer, strings
// and dicts are sequences, and undefined is iterable (as an empty sequence).
#include "chat_template/predicates.h"

#include <unordered_map>

#include "chat_template/arguments.h"
#include "chat_template/errors.h"
#include "chat_template/filters.h"
#include "chat_template/operators.h"
#include "chat_template/python_str.h"
#include "chat_template/value_format.h"

namespace vllm::jinja {
namespace {

using Test = bool (*)(const Value& value, const CallArgs& args, RenderBudget& budget);

// A test of the value alone.
template <bool (*Check)(const Value&)>
bool Unary(const Value& value, const CallArgs& args, RenderBudget&) {
  BindArguments("test", args, {});
  return Check(value);
}

// A test of str(value).
template <bool (*Check)(std::string_view)>
bool OfText(const Value& value, const CallArgs& args, RenderBudget& budget) {
  BindArguments("test", args, {});
  return Check(ToStr(value, budget));
}

// A test comparing the value with its one argument.
template <CompareOp Op>
bool Comparison(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("test", args, {{"other"}});
  return Compare(Op, value, a[0], budget);
}

bool IsDefined(const Value& v) { return !v.is_undefined(); }
bool IsUndefined(const Value& v) { return v.is_undefined(); }
bool IsNone(const Value& v) { return v.is_none(); }
bool IsBoolean(const Value& v) { return v.is_bool(); }
bool IsTrue(const Value& v) { return v.is_bool() && v.AsBool(); }
bool IsFalse(const Value& v) { return v.is_bool() && !v.AsBool(); }
bool IsInteger(const Value& v) { return v.is_int(); }
bool IsFloat(const Value& v) { return v.is_float(); }
bool IsNumber(const Value& v) { return v.is_number(); }
bool IsString(const Value& v) { return v.is_string(); }
bool IsMapping(const Value& v) { return v.is_dict(); }
// Jinja's undefined is callable (calling it fails).
bool IsCallable(const Value& v) { return v.is_function() || v.is_undefined(); }
bool IsIterable(const Value& v) {
  return v.is_string() || v.is_list() || v.is_dict() || v.is_undefined();
}
bool IsLower(std::string_view text) { return ToLower(text) == text && ToUpper(text) != text; }
bool IsUpper(std::string_view text) { return ToUpper(text) == text && ToLower(text) != text; }

// value % divisor == remainder, for numbers (so 2.5 is neither odd nor even, as in Jinja).
bool HasRemainder(const Value& value, const Value& divisor, int64_t remainder,
                  RenderBudget& budget) {
  if (!value.is_number() || !divisor.is_number()) {
    throw RenderError("divisibility test needs numbers, not " + TypeName(value) + " and " +
                      TypeName(divisor));
  }
  return Equals(ApplyBinary(BinaryOp::kModulo, value, divisor, budget), Value::Int(remainder),
                budget);
}

// `odd` (value % 2 == 1) and `even` (value % 2 == 0).
template <int64_t Remainder>
bool Parity(const Value& value, const CallArgs& args, RenderBudget& budget) {
  BindArguments("test", args, {});
  return HasRemainder(value, Value::Int(2), Remainder, budget);
}

bool DivisibleBy(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("divisibleby", args, {{"num"}});
  return HasRemainder(value, a[0], 0, budget);
}

bool SameAs(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("sameas", args, {{"other"}});
  if (value.kind() != a[0].kind()) return false;
  if (value.Identity() != nullptr) return value.Identity() == a[0].Identity();
  return Equals(value, a[0], budget);
}

bool In(const Value& value, const CallArgs& args, RenderBudget& budget) {
  std::vector<Value> a = BindArguments("in", args, {{"seq"}});
  return Contains(a[0], value, budget);
}

bool NamesFilter(const Value& value, const CallArgs& args, RenderBudget&) {
  BindArguments("filter", args, {});
  return value.is_string() && IsFilter(value.AsString());
}

bool NamesTest(const Value& value, const CallArgs& args, RenderBudget&) {
  BindArguments("test", args, {});
  return value.is_string() && IsTest(value.AsString());
}

const std::unordered_map<std::string_view, Test>& Tests() {
  static const std::unordered_map<std::string_view, Test> tests{
      {"defined", Unary<IsDefined>},
      {"undefined", Unary<IsUndefined>},
      {"none", Unary<IsNone>},
      {"boolean", Unary<IsBoolean>},
      {"true", Unary<IsTrue>},
      {"false", Unary<IsFalse>},
      {"integer", Unary<IsInteger>},
      {"float", Unary<IsFloat>},
      {"number", Unary<IsNumber>},
      {"string", Unary<IsString>},
      {"mapping", Unary<IsMapping>},
      {"callable", Unary<IsCallable>},
      {"iterable", Unary<IsIterable>},
      {"sequence", Unary<IsIterable>},
      {"lower", OfText<IsLower>},
      {"upper", OfText<IsUpper>},
      {"odd", Parity<1>},
      {"even", Parity<0>},
      {"divisibleby", DivisibleBy},
      {"sameas", SameAs},
      {"in", In},
      {"filter", NamesFilter},
      {"test", NamesTest},
      {"eq", Comparison<CompareOp::kEqual>},
      {"equalto", Comparison<CompareOp::kEqual>},
      {"==", Comparison<CompareOp::kEqual>},
      {"ne", Comparison<CompareOp::kNotEqual>},
      {"!=", Comparison<CompareOp::kNotEqual>},
      {"lt", Comparison<CompareOp::kLess>},
      {"lessthan", Comparison<CompareOp::kLess>},
      {"<", Comparison<CompareOp::kLess>},
      {"le", Comparison<CompareOp::kLessEqual>},
      {"<=", Comparison<CompareOp::kLessEqual>},
      {"gt", Comparison<CompareOp::kGreater>},
      {"greaterthan", Comparison<CompareOp::kGreater>},
      {">", Comparison<CompareOp::kGreater>},
      {"ge", Comparison<CompareOp::kGreaterEqual>},
      {">=", Comparison<CompareOp::kGreaterEqual>},
  };
  return tests;
}

}  // namespace

bool IsTest(std::string_view name) { return Tests().contains(name); }

bool ApplyTest(std::string_view name, const Value& value, const CallArgs& args,
               RenderBudget& budget) {
  auto found = Tests().find(name);
  if (found == Tests().end()) throw RenderError("no test named '" + std::string(name) + "'");
  return found->second(value, args, budget);
}

}  // namespace vllm::jinja
