// Matching the arguments of a call to named parameters as Python does, for builtin filters,
// tests, methods and functions, and checking the types of arguments.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat_template/value.h"

namespace vllm::jinja {

struct Parameter {
  std::string_view name;
  std::optional<Value> default_value;  // nullopt: the argument is required
};

// One value per parameter: positional arguments in order, then keyword arguments by name, then
// defaults. Throws RenderError naming `function` for a missing, unknown or extra argument.
std::vector<Value> BindArguments(std::string_view function, const CallArgs& args,
                                 std::initializer_list<Parameter> parameters);

// The argument as the type `function` needs, or RenderError.
const std::string& StringArgument(const Value& value, std::string_view function);
int64_t IntArgument(const Value& value, std::string_view function);

}  // namespace vllm::jinja
