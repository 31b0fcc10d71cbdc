// Template operators with Python semantics: floor division and modulo round toward negative
// infinity, `/` always gives a float, int arithmetic that overflows int64 is an error.
#include "chat_template/operators.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "chat_template/errors.h"
#include "chat_template/limits.h"
#include "chat_template/methods.h"
#include "chat_template/python_str.h"
#include "chat_template/str_format.h"
#include "chat_template/value_format.h"

namespace vllm::jinja {
namespace {

// The operator as written in templates.
std::string_view OperatorSymbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return "+";
    case BinaryOp::kSubtract:
      return "-";
    case BinaryOp::kMultiply:
      return "*";
    case BinaryOp::kDivide:
      return "/";
    case BinaryOp::kFloorDivide:
      return "//";
    case BinaryOp::kModulo:
      return "%";
    case BinaryOp::kPower:
      return "**";
    case BinaryOp::kConcat:
      return "~";
  }
  return "?";
}

[[noreturn]] void ThrowOperandError(std::string_view symbol, const Value& a, const Value& b) {
  if (a.is_undefined() || b.is_undefined()) {
    throw RenderError("undefined value used with '" + std::string(symbol) + "'");
  }
  throw RenderError("unsupported operand types for " + std::string(symbol) + ": '" + TypeName(a) +
                    "' and '" + TypeName(b) + "'");
}

[[noreturn]] void ThrowOverflow() { throw RenderError("integer overflow"); }

int64_t IntegerPower(int64_t base, int64_t exponent) {
  int64_t result = 1;
  while (exponent > 0) {
    if ((exponent & 1) && __builtin_mul_overflow(result, base, &result)) ThrowOverflow();
    exponent >>= 1;
    if (exponent > 0 && __builtin_mul_overflow(base, base, &base)) ThrowOverflow();
  }
  return result;
}

Value IntegerArithmetic(BinaryOp op, int64_t x, int64_t y) {
  int64_t result = 0;
  switch (op) {
    case BinaryOp::kAdd:
      if (__builtin_add_overflow(x, y, &result)) ThrowOverflow();
      return Value::Int(result);
    case BinaryOp::kSubtract:
      if (__builtin_sub_overflow(x, y, &result)) ThrowOverflow();
      return Value::Int(result);
    case BinaryOp::kMultiply:
      if (__builtin_mul_overflow(x, y, &result)) ThrowOverflow();
      return Value::Int(result);
    case BinaryOp::kFloorDivide: {
      if (y == 0) throw RenderError("integer division by zero");
      if (x == std::numeric_limits<int64_t>::min() && y == -1) ThrowOverflow();
      int64_t quotient = x / y;
      if (x % y != 0 && ((x < 0) != (y < 0))) --quotient;
      return Value::Int(quotient);
    }
    case BinaryOp::kModulo: {
      if (y == 0) throw RenderError("integer modulo by zero");
      if (y == -1) return Value::Int(0);
      int64_t remainder = x % y;
      if (remainder != 0 && ((remainder < 0) != (y < 0))) remainder += y;
      return Value::Int(remainder);
    }
    case BinaryOp::kPower:
      if (y < 0) {
        if (x == 0) throw RenderError("zero cannot be raised to a negative power");
        return Value::Float(std::pow(static_cast<double>(x), static_cast<double>(y)));
      }
      return Value::Int(IntegerPower(x, y));
    default:
      throw RenderError("internal error: not an integer operator");
  }
}

Value FloatArithmetic(BinaryOp op, double x, double y) {
  switch (op) {
    case BinaryOp::kAdd:
      return Value::Float(x + y);
    case BinaryOp::kSubtract:
      return Value::Float(x - y);
    case BinaryOp::kMultiply:
      return Value::Float(x * y);
    case BinaryOp::kDivide:
      if (y == 0) throw RenderError("division by zero");
      return Value::Float(x / y);
    case BinaryOp::kFloorDivide: {
      if (y == 0) throw RenderError("float floor division by zero");
      double remainder = std::fmod(x, y);
      double quotient = (x - remainder) / y;
      if (remainder != 0 && ((y < 0) != (remainder < 0))) quotient -= 1.0;
      if (quotient == 0) return Value::Float(std::copysign(0.0, x / y));
      double floored = std::floor(quotient);
      if (quotient - floored > 0.5) floored += 1.0;
      return Value::Float(floored);
    }
    case BinaryOp::kModulo: {
      if (y == 0) throw RenderError("float modulo by zero");
      double remainder = std::fmod(x, y);
      if (remainder == 0) return Value::Float(std::copysign(0.0, y));
      if ((remainder < 0) != (y < 0)) remainder += y;
      return Value::Float(remainder);
    }
    case BinaryOp::kPower:
      if (x == 0 && y < 0) throw RenderError("zero cannot be raised to a negative power");
      if (x < 0 && y != std::floor(y)) {
        throw RenderError("negative number cannot be raised to a fractional power");
      }
      return Value::Float(std::pow(x, y));
    default:
      throw RenderError("internal error: not a float operator");
  }
}

// sequence * times; the size of the result is checked before it is allocated.
Value Repeat(const Value& sequence, int64_t times, const RenderBudget& budget) {
  size_t count = static_cast<size_t>(std::max<int64_t>(times, 0));
  size_t total = 0;
  if (sequence.is_string()) {
    const std::string& text = sequence.AsString();
    if (__builtin_mul_overflow(text.size(), count, &total)) total = SIZE_MAX;
    budget.CheckStringSize(total);
    std::string out;
    out.reserve(total);
    for (size_t i = 0; i < count; ++i) out += text;
    return Value::String(std::move(out));
  }
  const auto& items = sequence.AsList();
  if (__builtin_mul_overflow(items.size(), count, &total)) total = SIZE_MAX;
  CheckListSize(total);
  std::vector<Value> out;
  out.reserve(total);
  for (size_t i = 0; i < count; ++i) out.insert(out.end(), items.begin(), items.end());
  return sequence.is_tuple() ? Value::Tuple(std::move(out)) : Value::List(std::move(out));
}

// -1, 0 or 1 as the number a is less than, equal to or greater than the number b.
int NumberOrder(const Value& a, const Value& b) {
  if (a.is_integral() && b.is_integral()) {
    return a.AsInt() < b.AsInt() ? -1 : a.AsInt() > b.AsInt() ? 1 : 0;
  }
  return a.AsDouble() < b.AsDouble() ? -1 : a.AsDouble() > b.AsDouble() ? 1 : 0;
}

// -1, 0 or 1 as a is less than, equal to or greater than b; throws for unordered types.
int Order(const Value& a, const Value& b, std::string_view symbol, int depth,
          RenderBudget& budget) {
  if (depth > kMaxValueDepth) throw RenderError("values nested too deeply to compare");
  budget.CountStep();
  if (a.is_number() && b.is_number()) return NumberOrder(a, b);
  if (a.is_string() && b.is_string()) {
    int c = a.AsString().compare(b.AsString());  // UTF-8 byte order is code point order
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    const auto& x = a.AsList();
    const auto& y = b.AsList();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      int c = Order(x[i], y[i], symbol, depth + 1, budget);
      if (c != 0) return c;
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  throw RenderError("'" + std::string(symbol) + "' not supported between instances of '" +
                    TypeName(a) + "' and '" + TypeName(b) + "'");
}

// Python's handling of slice bounds (PySlice_AdjustIndices).
int64_t SliceBound(const Value& bound, int64_t length, int64_t step, bool is_start) {
  if (bound.is_undefined() || bound.is_none()) {
    if (step > 0) return is_start ? 0 : length;
    return is_start ? length - 1 : -1;
  }
  if (!bound.is_integral()) throw RenderError("slice indices must be integers or None");
  int64_t index = bound.AsInt();
  if (index < 0) {
    index += length;
    if (index < 0) index = step < 0 ? -1 : 0;
  } else if (index >= length) {
    index = step < 0 ? length - 1 : length;
  }
  return index;
}

// Python's index normalization: -1 is the last item; nullopt when out of range.
std::optional<size_t> NormalizeIndex(const Value& key, size_t length) {
  int64_t index = key.AsInt();
  if (index < 0) index += static_cast<int64_t>(length);
  if (index < 0 || index >= static_cast<int64_t>(length)) return std::nullopt;
  return static_cast<size_t>(index);
}

}  // namespace

Value ApplyBinary(BinaryOp op, const Value& left, const Value& right, const RenderBudget& budget) {
  if (op == BinaryOp::kConcat) {
    std::string text = ToStr(left, budget);
    budget.Append(text, ToStr(right, budget));
    return Value::String(std::move(text));
  }
  if (left.is_number() && right.is_number()) {
    if (left.is_integral() && right.is_integral() && op != BinaryOp::kDivide) {
      return IntegerArithmetic(op, left.AsInt(), right.AsInt());
    }
    return FloatArithmetic(op, left.AsDouble(), right.AsDouble());
  }
  if (op == BinaryOp::kModulo && left.is_string()) {
    return Value::String(PercentFormat(left.AsString(), right, budget));
  }
  if (op == BinaryOp::kAdd && left.is_string() && right.is_string()) {
    if (left.is_markup() || right.is_markup()) {  // Markup escapes the plain str it meets
      auto text = [&](const Value& side) {
        return side.is_markup() ? side.AsString() : EscapeHtml(side.AsString(), budget);
      };
      std::string joined = text(left);
      budget.Append(joined, text(right));
      return Value::Markup(std::move(joined));
    }
    budget.CheckStringSize(left.AsString().size() + right.AsString().size());
    return Value::String(left.AsString() + right.AsString());
  }
  if (op == BinaryOp::kAdd && left.is_list() && right.is_list() &&
      left.is_tuple() == right.is_tuple()) {
    CheckListSize(left.AsList().size() + right.AsList().size());
    std::vector<Value> items = left.AsList();
    items.insert(items.end(), right.AsList().begin(), right.AsList().end());
    return left.is_tuple() ? Value::Tuple(std::move(items)) : Value::List(std::move(items));
  }
  if (op == BinaryOp::kMultiply) {
    bool left_sequence = left.is_string() || left.is_list();
    bool right_sequence = right.is_string() || right.is_list();
    if (left_sequence && right.is_integral()) return Repeat(left, right.AsInt(), budget);
    if (right_sequence && left.is_integral()) return Repeat(right, left.AsInt(), budget);
  }
  ThrowOperandError(OperatorSymbol(op), left, right);
}

Value Negate(const Value& operand) {
  if (operand.is_float()) return Value::Float(-operand.AsDouble());
  if (operand.is_integral()) {
    if (operand.AsInt() == std::numeric_limits<int64_t>::min()) ThrowOverflow();
    return Value::Int(-operand.AsInt());
  }
  throw RenderError("bad operand type for unary -: '" + TypeName(operand) + "'");
}

Value UnaryPlus(const Value& operand) {
  if (operand.is_float()) return operand;
  if (operand.is_integral()) return Value::Int(operand.AsInt());
  throw RenderError("bad operand type for unary +: '" + TypeName(operand) + "'");
}

bool Compare(CompareOp op, const Value& left, const Value& right, RenderBudget& budget) {
  switch (op) {
    case CompareOp::kEqual:
      return Equals(left, right, budget);
    case CompareOp::kNotEqual:
      return !Equals(left, right, budget);
    case CompareOp::kLess:
      return Order(left, right, "<", 0, budget) < 0;
    case CompareOp::kLessEqual:
      return Order(left, right, "<=", 0, budget) <= 0;
    case CompareOp::kGreater:
      return Order(left, right, ">", 0, budget) > 0;
    case CompareOp::kGreaterEqual:
      return Order(left, right, ">=", 0, budget) >= 0;
    case CompareOp::kIn:
      return Contains(right, left, budget);
    case CompareOp::kNotIn:
      return !Contains(right, left, budget);
  }
  return false;
}

bool Equals(const Value& a, const Value& b, RenderBudget& budget) {
  return ValuesEqual(a, b, Equality::kOperator, &budget);
}

bool LessThan(const Value& a, const Value& b, RenderBudget& budget) {
  return Order(a, b, "<", 0, budget) < 0;
}

bool Contains(const Value& container, const Value& item, RenderBudget& budget) {
  switch (container.kind()) {
    case ValueKind::kString:
      if (!item.is_string()) {
        throw RenderError("'in <string>' requires string as left operand, not " + TypeName(item));
      }
      return container.AsString().find(item.AsString()) != std::string::npos;
    case ValueKind::kList:
      for (const Value& element : container.AsList()) {
        if (Equals(element, item, budget)) return true;
      }
      return false;
    case ValueKind::kDict:
      return container.AsDict().Find(item) != nullptr;
    case ValueKind::kUndefined:
      return false;
    default:
      throw RenderError("argument of type '" + TypeName(container) + "' is not iterable");
  }
}

Value Subscript(const Value& object, const Value& key) {
  if (key.is_integral()) {
    if (object.is_list()) {
      const auto& items = object.AsList();
      if (auto index = NormalizeIndex(key, items.size())) return items[*index];
      return Value();
    }
    if (object.is_string()) {
      std::vector<std::string_view> chars = CodePoints(object.AsString());
      if (auto index = NormalizeIndex(key, chars.size()))
        return Value::String(std::string(chars[*index]));
      return Value();
    }
  }
  if (object.is_dict() || object.is_namespace()) {
    if (const Value* found = object.AsDict().Find(key)) return *found;
  }
  if (key.is_string()) {
    if (auto method = GetMethod(object, key.AsString())) return *method;
  }
  return Value();
}

Value Attribute(const Value& object, std::string_view name) {
  if (auto method = GetMethod(object, name)) return *method;
  if (object.is_dict() || object.is_namespace()) {
    if (const Value* found = object.AsDict().Find(name)) return *found;
  }
  return Value();
}

Value Slice(const Value& object, const Value& start, const Value& stop, const Value& step) {
  if (!object.is_string() && !object.is_list()) {
    throw RenderError("'" + TypeName(object) + "' object cannot be sliced");
  }
  int64_t stride = 1;
  if (!step.is_undefined() && !step.is_none()) {
    if (!step.is_integral()) throw RenderError("slice indices must be integers or None");
    stride = step.AsInt();
    if (stride == 0) throw RenderError("slice step cannot be zero");
  }
  auto select = [&](int64_t length, auto take) {
    int64_t from = SliceBound(start, length, stride, true);
    int64_t to = SliceBound(stop, length, stride, false);
    for (int64_t i = from; stride > 0 ? i < to : i > to; i += stride) take(static_cast<size_t>(i));
  };
  if (object.is_string()) {
    std::vector<std::string_view> chars = CodePoints(object.AsString());
    std::string out;
    select(static_cast<int64_t>(chars.size()), [&](size_t i) { out += chars[i]; });
    return Value::String(std::move(out));
  }
  const auto& items = object.AsList();
  std::vector<Value> out;
  select(static_cast<int64_t>(items.size()), [&](size_t i) { out.push_back(items[i]); });
  return object.is_tuple() ? Value::Tuple(std::move(out)) : Value::List(std::move(out));
}

int64_t Length(const Value& value) {
  switch (value.kind()) {
    case ValueKind::kString:
      return static_cast<int64_t>(CodePointCount(value.AsString()));
    case ValueKind::kList:
      return static_cast<int64_t>(value.AsList().size());
    case ValueKind::kDict:
      return static_cast<int64_t>(value.AsDict().entries.size());
    case ValueKind::kUndefined:
      return 0;
    default:
      throw RenderError("object of type '" + TypeName(value) + "' has no len()");
  }
}

std::vector<Value> Iterate(const Value& value) {
  switch (value.kind()) {
    case ValueKind::kList:
      return value.AsList();
    case ValueKind::kDict: {
      std::vector<Value> keys;
      for (const auto& entry : value.AsDict().entries) keys.push_back(entry.first);
      return keys;
    }
    case ValueKind::kString: {
      CheckListSize(CodePointCount(value.AsString()));
      std::vector<Value> chars;
      for (std::string_view c : CodePoints(value.AsString()))
        chars.push_back(Value::String(std::string(c)));
      return chars;
    }
    case ValueKind::kUndefined:
      return {};
    default:
      throw RenderError("'" + TypeName(value) + "' object is not iterable");
  }
}

std::string TypeName(const Value& value) {
  switch (value.kind()) {
    case ValueKind::kUndefined:
      return "Undefined";
    case ValueKind::kNone:
      return "NoneType";
    case ValueKind::kBool:
      return "bool";
    case ValueKind::kInt:
      return "int";
    case ValueKind::kFloat:
      return "float";
    case ValueKind::kString:
      return "str";
    case ValueKind::kList:
      return value.is_tuple() ? "tuple" : "list";
    case ValueKind::kDict:
      return "dict";
    case ValueKind::kNamespace:
      return "Namespace";
    case ValueKind::kFunction:
      return "function";
  }
  return "object";
}

}  // namespace vllm::jinja
