// GPT-2's byte-level alphabet: every byte maps to a printable Unicode character, so byte-level
// BPE vocabularies store arbitrary bytes as text ("Ġ" is the space byte).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vllm {

// The UTF-8 text of `bytes` in the byte-level alphabet.
std::string BytesToByteLevel(std::string_view bytes);
// The bytes that byte-level text stands for; nullopt if it holds a character outside the alphabet.
std::optional<std::string> ByteLevelToBytes(std::string_view text);

}  // namespace vllm
