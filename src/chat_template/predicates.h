// The template tests, `value is name` and `value is name(args)`: defined, none, string, mapping,
// odd, divisibleby, equalto...
#pragma once

#include <string_view>

#include "chat_template/value.h"

namespace vllm::jinja {

bool IsTest(std::string_view name);
// Throws RenderError for an unknown test or wrong arguments, or when `budget` runs out (tests that
// compare values count their steps).
bool ApplyTest(std::string_view name, const Value& value, const CallArgs& args,
               RenderBudget& budget);

}  // namespace vllm::jinja
