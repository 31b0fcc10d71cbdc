// Python `str` behaviour on UTF-8 text: lengths and positions count code points, whitespace is
// Unicode whitespace as str.isspace() sees it, and case mapping is Unicode's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/utf8_encode.h"

namespace vllm::jinja {

// The code point of one UTF-8 sequence as CodePoints() splits them; U+FFFD for an invalid byte.
char32_t DecodeCodePoint(std::string_view bytes);

// The code points of `text`, each as its bytes; an invalid byte counts as one code point.
std::vector<std::string_view> CodePoints(std::string_view text);
size_t CodePointCount(std::string_view text);

// str.isspace() of one code point given as its UTF-8 bytes.
bool IsPythonSpace(std::string_view code_point);
// str.isalpha(), isdecimal(), isdigit() and isnumeric() of one code point; isalnum() is
// IsPythonAlpha or IsPythonNumeric (which includes the other two).
bool IsPythonAlpha(char32_t code_point);
bool IsPythonDecimal(char32_t code_point);
bool IsPythonDigit(char32_t code_point);
bool IsPythonNumeric(char32_t code_point);

// str.strip() / lstrip() / rstrip() without arguments (whitespace) or with `chars`.
std::string_view StripSpace(std::string_view text, bool left, bool right);
std::string_view StripChars(std::string_view text, std::string_view chars, bool left, bool right);

// str.split(None, max_split): runs of whitespace separate, empty pieces are dropped.
std::vector<std::string> SplitOnSpace(std::string_view text, int64_t max_split);
// str.split(separator, max_split); `separator` must not be empty. max_split < 0: no limit.
std::vector<std::string> SplitOn(std::string_view text, std::string_view separator,
                                 int64_t max_split);
// str.rsplit(None, max_split) and str.rsplit(separator, max_split): the same pieces as the
// splits above when there is no limit, but a limit splits from the right.
std::vector<std::string> RSplitOnSpace(std::string_view text, int64_t max_split);
std::vector<std::string> RSplitOn(std::string_view text, std::string_view separator,
                                  int64_t max_split);
// str.splitlines() without line ends.
std::vector<std::string> SplitLines(std::string_view text);

// str.replace(old, replacement, max_count); max_count < 0: every occurrence.
std::string Replace(std::string_view text, std::string_view old, std::string_view replacement,
                    int64_t max_count);
// The length in bytes of Replace()'s result, found without building it (SIZE_MAX if it overflows).
size_t ReplacedSize(std::string_view text, std::string_view old, std::string_view replacement,
                    int64_t max_count);
// str.find(sub): the code point index of the first occurrence, or -1.
int64_t Find(std::string_view text, std::string_view sub);
// str.rfind(sub): the code point index of the last occurrence, or -1.
int64_t RFind(std::string_view text, std::string_view sub);
// str.count(sub): non-overlapping occurrences.
int64_t CountOccurrences(std::string_view text, std::string_view sub);

// str.upper(), str.lower(), str.capitalize() and str.title().
std::string ToUpper(std::string_view text);
std::string ToLower(std::string_view text);
std::string Capitalize(std::string_view text);
std::string TitleCase(std::string_view text);

}  // namespace vllm::jinja
