// UTF-8 helpers for tokenizers and detokenizers.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vllm {

// Bytes in the UTF-8 sequence that starts with `lead` (1 for a stray continuation byte).
size_t Utf8SequenceLength(unsigned char lead);

// Splits text into UTF-8 characters; invalid or truncated sequences become single bytes.
std::vector<std::string_view> SplitUtf8Characters(std::string_view text);

// Bytes at the end of `text` that begin a UTF-8 character not yet complete (0 when complete).
size_t IncompleteUtf8Suffix(std::string_view text);

}  // namespace vllm
