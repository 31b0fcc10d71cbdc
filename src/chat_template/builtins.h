// The global functions templates can call: range, namespace, dict, raise_exception (the
// template's way to reject its input) and strftime_now (transformers' current-date helper).
#pragma once

#include <string_view>

#include "chat_template/value.h"

namespace vllm::jinja {

// The builtin function `name`, or nullptr when there is none. Variables shadow builtins.
const Value* FindBuiltin(std::string_view name);

}  // namespace vllm::jinja
