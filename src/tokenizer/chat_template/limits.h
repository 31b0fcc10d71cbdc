// Bounds that keep a hostile or broken template from exhausting memory, stack or time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tokenizer/chat_template/errors.h"

namespace vllm::jinja {

// Largest string a template may build, the rendered output included.
inline constexpr size_t kMaxStringBytes = size_t{64} << 20;
// Most items in a list a template builds (range(), repetition).
inline constexpr int64_t kMaxListItems = 1'000'000;
// Most loop iterations and macro calls in one rendering, all loops together.
inline constexpr int64_t kMaxSteps = 1'000'000;
// Deepest chain of macro calls.
inline constexpr int kMaxMacroDepth = 256;
// Deepest nesting of expressions and statements being evaluated at once, macro calls included.
inline constexpr int kMaxEvaluationDepth = 1024;
// Deepest nesting the parser accepts, in tags and in expressions.
inline constexpr int kMaxSyntaxDepth = 256;
// Deepest nesting of lists and dicts that are printed, compared or read from JSON.
inline constexpr int kMaxValueDepth = 512;

// Throw RenderError when a string or list would grow past the limits above.
inline void CheckStringSize(size_t bytes) {
  if (bytes > kMaxStringBytes) {
    throw RenderError("string longer than " + std::to_string(kMaxStringBytes) + " bytes");
  }
}
inline void AppendWithinLimit(std::string& out, std::string_view piece) {
  CheckStringSize(out.size() + piece.size());
  out += piece;
}
inline void CheckListSize(size_t items) {
  if (items > static_cast<size_t>(kMaxListItems)) {
    throw RenderError("list longer than " + std::to_string(kMaxListItems) + " items");
  }
}

}  // namespace vllm::jinja
