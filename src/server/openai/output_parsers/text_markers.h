// Finding marker strings (<tool_call>, </think>, <|end|>, ...) in streamed text: a marker may be
// split across deltas, so a parser holds back only a tail of the text that could still become one.
#pragma once

#include <initializer_list>
#include <string_view>

namespace vllm::server {

// The length of the longest tail of `text` that is a proper prefix of `marker`: the bytes to
// hold back until the next delta shows whether the marker follows.
size_t PartialMarkerLength(std::string_view text, std::string_view marker);
size_t PartialMarkerLength(std::string_view text, std::initializer_list<std::string_view> markers);

// The earliest occurrence of any of `markers` in `text`.
struct MarkerMatch {
  size_t position = std::string_view::npos;  // npos: none occurs
  std::string_view marker;
};
MarkerMatch FindFirstMarker(std::string_view text, std::initializer_list<std::string_view> markers);

// The start of streamed `text` that can be handled before the next `marker`: up to the marker
// where it occurs, else all but a tail that may still become the marker (all of the text where
// the output ended).
struct TextBeforeMarker {
  size_t length = 0;
  bool marker_found = false;
};
TextBeforeMarker FindTextBeforeMarker(std::string_view text, std::string_view marker, bool at_end);

// JSON's (and Python's json module's) whitespace: space, tab, newline, carriage return.
inline bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The number of JSON whitespace bytes `text` starts with.
size_t LeadingJsonSpace(std::string_view text);

}  // namespace vllm::server
