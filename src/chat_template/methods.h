// The Python methods of str, list and dict values that templates call:
// message.content.split('</think>'), message.get('name'), tool_calls.append(call)...
#pragma once

#include <optional>
#include <string_view>

#include "chat_template/value.h"

namespace vllm::jinja {

// `receiver.name` bound to its receiver, or nullopt when the type of receiver has no such method.
std::optional<Value> GetMethod(const Value& receiver, std::string_view name);

}  // namespace vllm::jinja
