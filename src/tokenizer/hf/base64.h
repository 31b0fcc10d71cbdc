// Base64 as tokenizer files store binary data (a Precompiled charsmap, tekken.json's token bytes).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vllm::hf {

// Standard base64 (RFC 4648, with or without padding); nullopt on any other character.
std::optional<std::string> DecodeBase64(std::string_view text);

}  // namespace vllm::hf
