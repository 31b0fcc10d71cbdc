// Python-style argument binding for builtin callables.
#include "chat_template/arguments.h"

#include "chat_template/errors.h"
#include "chat_template/operators.h"

namespace vllm::jinja {

std::vector<Value> BindArguments(std::string_view function, const CallArgs& args,
                                 std::initializer_list<Parameter> parameters) {
  const std::string name(function);
  if (args.positional.size() > parameters.size()) {
    throw RenderError(name + "() takes at most " + std::to_string(parameters.size()) +
                      " arguments (" + std::to_string(args.positional.size()) + " given)");
  }
  std::vector<std::optional<Value>> bound(parameters.size());
  for (size_t i = 0; i < args.positional.size(); ++i) bound[i] = args.positional[i];
  for (const auto& [keyword, value] : args.keyword) {
    size_t index = 0;
    for (const Parameter& parameter : parameters) {
      if (parameter.name == keyword) break;
      ++index;
    }
    if (index == parameters.size()) {
      throw RenderError(name + "() got an unexpected keyword argument '" + keyword + "'");
    }
    if (bound[index]) {
      throw RenderError(name + "() got multiple values for argument '" + keyword + "'");
    }
    bound[index] = value;
  }
  std::vector<Value> values;
  values.reserve(parameters.size());
  size_t index = 0;
  for (const Parameter& parameter : parameters) {
    if (!bound[index]) {
      if (!parameter.default_value) {
        throw RenderError(name + "() missing required argument '" + std::string(parameter.name) +
                          "'");
      }
      bound[index] = parameter.default_value;
    }
    values.push_back(std::move(*bound[index]));
    ++index;
  }
  return values;
}

const std::string& StringArgument(const Value& value, std::string_view function) {
  if (!value.is_string()) {
    throw RenderError(std::string(function) + "() expects a string, not " + TypeName(value));
  }
  return value.AsString();
}

int64_t IntArgument(const Value& value, std::string_view function) {
  if (!value.is_integral()) {
    throw RenderError(std::string(function) + "() expects an integer, not " + TypeName(value));
  }
  return value.AsInt();
}

}  // namespace vllm::jinja
