// Python semantics of the template operators on values: arithmetic (and `str % args`, see
// str_format.h), comparison, membership, subscripts and slices, attribute lookup, len() and
// iteration. Type errors throw RenderError.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chat_template/value.h"

namespace vllm::jinja {

enum class BinaryOp { kAdd, kSubtract, kMultiply, kDivide, kFloorDivide, kModulo, kPower, kConcat };
enum class CompareOp { kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual, kIn, kNotIn };

// The strings and lists it builds stay within `budget`'s limits.
Value ApplyBinary(BinaryOp op, const Value& left, const Value& right, const RenderBudget& budget);
Value Negate(const Value& operand);
Value UnaryPlus(const Value& operand);

// Comparisons count a step of `budget` for each pair of values they compare: one for two
// numbers or strings, one more for each pair of items when lists or dicts are compared.
bool Compare(CompareOp op, const Value& left, const Value& right, RenderBudget& budget);
bool Equals(const Value& a, const Value& b, RenderBudget& budget);
// a < b; throws RenderError for types that have no order between them.
bool LessThan(const Value& a, const Value& b, RenderBudget& budget);
// `item in container`.
bool Contains(const Value& container, const Value& item, RenderBudget& budget);

// object[key] as Jinja reads it: the item, else the attribute named key, else undefined.
Value Subscript(const Value& object, const Value& key);
// object.name as Jinja reads it: the attribute (a method), else the item, else undefined.
Value Attribute(const Value& object, std::string_view name);
// object[start:stop:step] of a string or list; a missing part is undefined or None.
Value Slice(const Value& object, const Value& start, const Value& stop, const Value& step);

// len(value); undefined has length 0.
int64_t Length(const Value& value);
// The items `for` visits: list items, dict keys, string characters; undefined gives none. A string
// of more characters than a list may hold items throws RenderError.
std::vector<Value> Iterate(const Value& value);

// Python's name for the type of value: "str", "int", "NoneType", "Undefined"...
std::string TypeName(const Value& value);

}  // namespace vllm::jinja
