// The filters that make text from a value: case, trimming, replacing, indenting, escaping,
// printf-style format, centering, truncating, counting words, and tojson.
#pragma once

#include <span>
#include <string_view>
#include <utility>

#include "chat_template/filters.h"

namespace vllm::jinja {

// Each filter with its name, for filters.cc's table.
std::span<const std::pair<std::string_view, FilterFunction>> TextFilters();

}  // namespace vllm::jinja
