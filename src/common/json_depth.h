// A linear scan of JSON text for its nesting depth, so that untrusted JSON too deep for a
// recursive walk is refused before any parser or schema compiler builds anything from it.
#pragma once

#include <string_view>

namespace vllm {

// Whether `text` nests arrays and objects deeper than `max_depth` (brackets inside strings are
// skipped). The text need not be valid JSON.
bool JsonNestsDeeperThan(std::string_view text, int max_depth);

}  // namespace vllm
