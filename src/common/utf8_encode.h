// Writing a Unicode code point as UTF-8: the one encoder every room uses.
#pragma once

#include <string>

namespace vllm {

// Appends the UTF-8 bytes of `code_point`; a surrogate or a value past U+10FFFF becomes U+FFFD.
void AppendUtf8(char32_t code_point, std::string* out);

}  // namespace vllm
