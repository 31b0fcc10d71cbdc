// Marker search and hold-back lengths for streamed text.
#include "server/openai/output_parsers/text_markers.h"

#include <algorithm>

namespace vllm::server {

size_t PartialMarkerLength(std::string_view text, std::string_view marker) {
  if (marker.empty()) return 0;
  for (size_t length = std::min(text.size(), marker.size() - 1); length > 0; --length) {
    if (text.substr(text.size() - length) == marker.substr(0, length)) return length;
  }
  return 0;
}

size_t PartialMarkerLength(std::string_view text, std::initializer_list<std::string_view> markers) {
  size_t longest = 0;
  for (std::string_view marker : markers) {
    longest = std::max(longest, PartialMarkerLength(text, marker));
  }
  return longest;
}

MarkerMatch FindFirstMarker(std::string_view text,
                            std::initializer_list<std::string_view> markers) {
  MarkerMatch first;
  for (std::string_view marker : markers) {
    const size_t position = text.find(marker);
    if (position < first.position) first = MarkerMatch{position, marker};
  }
  return first;
}

TextBeforeMarker FindTextBeforeMarker(std::string_view text, std::string_view marker, bool at_end) {
  const size_t position = text.find(marker);
  if (position != std::string_view::npos) return {position, true};
  return {at_end ? text.size() : text.size() - PartialMarkerLength(text, marker), false};
}

size_t LeadingJsonSpace(std::string_view text) {
  size_t count = 0;
  while (count < text.size() && IsJsonSpace(text[count])) ++count;
  return count;
}

}  // namespace vllm::server
