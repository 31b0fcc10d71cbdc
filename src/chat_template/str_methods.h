// The methods of str values, as Python defines them: strip, split, replace, startswith, format,
// isdigit, center, partition... Lengths, widths and positions count code points.
#pragma once

#include <string_view>

#include "chat_template/value.h"

namespace vllm::jinja {

using MethodFunction = Value (*)(const Value& self, const CallArgs& args, RenderBudget& budget);

// The str method named `name`, or nullptr when str has none.
MethodFunction FindStringMethod(std::string_view name);

}  // namespace vllm::jinja
