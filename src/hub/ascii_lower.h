// ASCII lower case: HTTP header names, URL schemes and file names compare without case.
#pragma once

#include <cctype>
#include <string>

namespace vllm::hub {

inline std::string AsciiLower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace vllm::hub
