// Template values from JSON: objects become dicts in their key order, arrays lists, and numbers
// int or float as JSON wrote them.
#pragma once

#include <nlohmann/json.hpp>

#include "chat_template/value.h"

namespace vllm::jinja {

// Throws RenderError for JSON nested deeper than kMaxValueDepth.
Value ValueFromJson(const nlohmann::ordered_json& json);

}  // namespace vllm::jinja
