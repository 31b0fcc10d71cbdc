// Joining strings with a separator, as the CORS headers and the GBNF alternatives list them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vllm {

// `items` separated by `separator`; a separator follows only text already written, so leading
// empty items leave none.
inline std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string joined;
  for (const std::string& item : items) {
    if (!joined.empty()) joined += separator;
    joined += item;
  }
  return joined;
}

}  // namespace vllm
