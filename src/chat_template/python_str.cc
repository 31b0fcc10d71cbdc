// Python str methods on UTF-8 text, with ICU for Unicode case mapping.
#include "chat_template/python_str.h"

#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>

#include "common/utf8.h"

namespace vllm::jinja {

char32_t DecodeCodePoint(std::string_view bytes) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
  switch (bytes.size()) {
    case 0:
      return 0xFFFD;
    case 1:
      return byte(0) < 0x80 ? byte(0) : 0xFFFD;
    case 2:
      return ((byte(0) & 0x1F) << 6) | (byte(1) & 0x3F);
    case 3:
      return ((byte(0) & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) | (byte(2) & 0x3F);
    default:
      return ((byte(0) & 0x07) << 18) | ((byte(1) & 0x3F) << 12) | ((byte(2) & 0x3F) << 6) |
             (byte(3) & 0x3F);
  }
}

namespace {

bool IsAscii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return (c & 0x80) == 0; });
}

bool IsLineBreak(char32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
         c == 0x85 || c == 0x2028 || c == 0x2029;
}

template <typename CaseMap>
std::string MapWithIcu(std::string_view text, CaseMap map) {
  icu::UnicodeString unicode = icu::UnicodeString::fromUTF8(
      icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  map(unicode);
  std::string out;
  unicode.toUTF8String(out);
  return out;
}

}  // namespace

std::vector<std::string_view> CodePoints(std::string_view text) {
  return SplitUtf8Characters(text);
}

size_t CodePointCount(std::string_view text) {
  if (IsAscii(text)) return text.size();
  return SplitUtf8Characters(text).size();
}

bool IsPythonSpace(std::string_view code_point) {
  char32_t c = DecodeCodePoint(code_point);
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

bool IsPythonAlpha(char32_t code_point) {
  switch (u_charType(static_cast<UChar32>(code_point))) {
    case U_UPPERCASE_LETTER:
    case U_LOWERCASE_LETTER:
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
      return true;
    default:
      return false;
  }
}

bool IsPythonDecimal(char32_t code_point) {
  return u_charType(static_cast<UChar32>(code_point)) == U_DECIMAL_DIGIT_NUMBER;
}

bool IsPythonDigit(char32_t code_point) {
  int type = u_getIntPropertyValue(static_cast<UChar32>(code_point), UCHAR_NUMERIC_TYPE);
  return type == U_NT_DECIMAL || type == U_NT_DIGIT;
}

bool IsPythonNumeric(char32_t code_point) {
  return u_getIntPropertyValue(static_cast<UChar32>(code_point), UCHAR_NUMERIC_TYPE) != U_NT_NONE;
}

namespace {

template <typename Predicate>
std::string_view StripIf(std::string_view text, bool left, bool right, Predicate strip) {
  std::vector<std::string_view> chars = CodePoints(text);
  size_t begin = 0, end = chars.size();
  if (left) {
    while (begin < end && strip(chars[begin])) ++begin;
  }
  if (right) {
    while (end > begin && strip(chars[end - 1])) --end;
  }
  if (begin == end) return text.substr(0, 0);
  size_t from = static_cast<size_t>(chars[begin].data() - text.data());
  size_t to = static_cast<size_t>(chars[end - 1].data() - text.data()) + chars[end - 1].size();
  return text.substr(from, to - from);
}

}  // namespace

std::string_view StripSpace(std::string_view text, bool left, bool right) {
  return StripIf(text, left, right, IsPythonSpace);
}

std::string_view StripChars(std::string_view text, std::string_view chars, bool left, bool right) {
  std::vector<std::string_view> strip_set = CodePoints(chars);
  return StripIf(text, left, right, [&](std::string_view c) {
    return std::find(strip_set.begin(), strip_set.end(), c) != strip_set.end();
  });
}

std::vector<std::string> SplitOnSpace(std::string_view text, int64_t max_split) {
  std::vector<std::string> pieces;
  std::vector<std::string_view> chars = CodePoints(text);
  size_t i = 0;
  auto offset = [&](size_t index) {
    return index < chars.size() ? static_cast<size_t>(chars[index].data() - text.data())
                                : text.size();
  };
  while (true) {
    while (i < chars.size() && IsPythonSpace(chars[i])) ++i;
    if (i == chars.size()) break;
    if (max_split >= 0 && static_cast<int64_t>(pieces.size()) == max_split) {
      pieces.emplace_back(text.substr(offset(i)));  // the rest, trailing whitespace included
      break;
    }
    size_t start = i;
    while (i < chars.size() && !IsPythonSpace(chars[i])) ++i;
    pieces.emplace_back(text.substr(offset(start), offset(i) - offset(start)));
  }
  return pieces;
}

std::vector<std::string> SplitOn(std::string_view text, std::string_view separator,
                                 int64_t max_split) {
  std::vector<std::string> pieces;
  size_t start = 0;
  while (max_split < 0 || static_cast<int64_t>(pieces.size()) < max_split) {
    size_t found = text.find(separator, start);
    if (found == std::string_view::npos) break;
    pieces.emplace_back(text.substr(start, found - start));
    start = found + separator.size();
  }
  pieces.emplace_back(text.substr(start));
  return pieces;
}

std::vector<std::string> RSplitOnSpace(std::string_view text, int64_t max_split) {
  std::vector<std::string> pieces;
  std::vector<std::string_view> chars = CodePoints(text);
  size_t i = chars.size();
  auto offset = [&](size_t index) {
    return index < chars.size() ? static_cast<size_t>(chars[index].data() - text.data())
                                : text.size();
  };
  while (true) {
    while (i > 0 && IsPythonSpace(chars[i - 1])) --i;
    if (i == 0) break;
    if (max_split >= 0 && static_cast<int64_t>(pieces.size()) == max_split) {
      pieces.emplace_back(text.substr(0, offset(i)));  // the rest, leading whitespace included
      break;
    }
    size_t end = i;
    while (i > 0 && !IsPythonSpace(chars[i - 1])) --i;
    pieces.emplace_back(text.substr(offset(i), offset(end) - offset(i)));
  }
  std::reverse(pieces.begin(), pieces.end());
  return pieces;
}

std::vector<std::string> RSplitOn(std::string_view text, std::string_view separator,
                                  int64_t max_split) {
  std::vector<std::string> pieces;
  size_t end = text.size();
  while ((max_split < 0 || static_cast<int64_t>(pieces.size()) < max_split) &&
         end >= separator.size()) {
    size_t found = text.rfind(separator, end - separator.size());
    if (found == std::string_view::npos) break;
    pieces.emplace_back(text.substr(found + separator.size(), end - found - separator.size()));
    end = found;
  }
  pieces.emplace_back(text.substr(0, end));
  std::reverse(pieces.begin(), pieces.end());
  return pieces;
}

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  std::vector<std::string_view> chars = CodePoints(text);
  std::string line;
  for (size_t i = 0; i < chars.size(); ++i) {
    char32_t c = DecodeCodePoint(chars[i]);
    if (!IsLineBreak(c)) {
      line.append(chars[i]);
      continue;
    }
    if (c == '\r' && i + 1 < chars.size() && chars[i + 1] == "\n") ++i;
    lines.push_back(std::move(line));
    line.clear();
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

std::string Replace(std::string_view text, std::string_view old, std::string_view replacement,
                    int64_t max_count) {
  std::string out;
  int64_t done = 0;
  auto may_replace = [&] { return max_count < 0 || done < max_count; };
  if (old.empty()) {  // Python inserts the replacement around every code point
    for (std::string_view c : CodePoints(text)) {
      if (may_replace()) {
        out += replacement;
        ++done;
      }
      out += c;
    }
    if (may_replace()) out += replacement;
    return out;
  }
  size_t start = 0;
  while (may_replace()) {
    size_t found = text.find(old, start);
    if (found == std::string_view::npos) break;
    out.append(text.substr(start, found - start));
    out.append(replacement);
    start = found + old.size();
    ++done;
  }
  out.append(text.substr(start));
  return out;
}

size_t ReplacedSize(std::string_view text, std::string_view old, std::string_view replacement,
                    int64_t max_count) {
  auto count = static_cast<size_t>(CountOccurrences(text, old));
  if (max_count >= 0) count = std::min(count, static_cast<size_t>(max_count));
  size_t added = 0;
  size_t size = text.size() - count * old.size();  // the occurrences do not overlap
  if (__builtin_mul_overflow(count, replacement.size(), &added) ||
      __builtin_add_overflow(size, added, &size)) {
    return SIZE_MAX;
  }
  return size;
}

int64_t Find(std::string_view text, std::string_view sub) {
  size_t found = text.find(sub);
  if (found == std::string_view::npos) return -1;
  return static_cast<int64_t>(CodePointCount(text.substr(0, found)));
}

int64_t RFind(std::string_view text, std::string_view sub) {
  size_t found = text.rfind(sub);
  if (found == std::string_view::npos) return -1;
  return static_cast<int64_t>(CodePointCount(text.substr(0, found)));
}

int64_t CountOccurrences(std::string_view text, std::string_view sub) {
  if (sub.empty()) return static_cast<int64_t>(CodePointCount(text)) + 1;
  int64_t count = 0;
  for (size_t found = text.find(sub); found != std::string_view::npos;
       found = text.find(sub, found + sub.size())) {
    ++count;
  }
  return count;
}

std::string ToUpper(std::string_view text) {
  if (IsAscii(text)) {
    std::string out(text);
    for (char& c : out) {
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
    return out;
  }
  return MapWithIcu(text, [](icu::UnicodeString& s) { s.toUpper(icu::Locale::getRoot()); });
}

std::string ToLower(std::string_view text) {
  if (IsAscii(text)) {
    std::string out(text);
    for (char& c : out) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
  }
  return MapWithIcu(text, [](icu::UnicodeString& s) { s.toLower(icu::Locale::getRoot()); });
}

std::string Capitalize(std::string_view text) {
  std::vector<std::string_view> chars = CodePoints(text);
  if (chars.empty()) return "";
  std::string out;
  AppendUtf8(static_cast<char32_t>(u_totitle(static_cast<UChar32>(DecodeCodePoint(chars[0])))),
             &out);
  out += ToLower(text.substr(chars[0].size()));
  return out;
}

std::string TitleCase(std::string_view text) {
  std::string out;
  bool previous_is_cased = false;
  for (std::string_view c : CodePoints(text)) {
    UChar32 code_point = static_cast<UChar32>(DecodeCodePoint(c));
    UChar32 mapped = previous_is_cased ? u_tolower(code_point) : u_totitle(code_point);
    AppendUtf8(static_cast<char32_t>(mapped), &out);
    previous_is_cased = u_hasBinaryProperty(code_point, UCHAR_CASED);
  }
  return out;
}

}  // namespace vllm::jinja
