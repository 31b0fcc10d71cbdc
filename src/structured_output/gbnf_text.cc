// Writing GBNF text: literals, character classes, code point escapes; UTF-8 decoding.
#include "structured_output/gbnf_text.h"

#include <algorithm>
#include <cstdio>

#include "common/join.h"

namespace vllm {
namespace {

constexpr char32_t kFirstSurrogate = 0xD800;
constexpr char32_t kLastSurrogate = 0xDFFF;

// `\xHH`, `\uHHHH` or `\UHHHHHHHH`, the shortest that holds `code_point`.
std::string HexEscape(char32_t code_point) {
  char buffer[16];
  if (code_point <= 0xFF) {
    std::snprintf(buffer, sizeof(buffer), "\\x%02X", static_cast<unsigned>(code_point));
  } else if (code_point <= 0xFFFF) {
    std::snprintf(buffer, sizeof(buffer), "\\u%04X", static_cast<unsigned>(code_point));
  } else {
    std::snprintf(buffer, sizeof(buffer), "\\U%08X", static_cast<unsigned>(code_point));
  }
  return buffer;
}

// One code point inside `[...]`: printable ASCII as itself (class metacharacters escaped),
// everything else as a hex escape.
std::string ClassCodePoint(char32_t code_point) {
  switch (code_point) {
    case '\\':
    case ']':
    case '[':
    case '-':
    case '^':
    case '"':
      return std::string("\\") + static_cast<char>(code_point);
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    default:
      break;
  }
  if (code_point >= 0x20 && code_point < 0x7F) return std::string(1, static_cast<char>(code_point));
  return HexEscape(code_point);
}

std::string ClassBody(const std::vector<CodePointRange>& ranges) {
  std::string body;
  for (const CodePointRange& range : ranges) {
    body += ClassCodePoint(range.first);
    if (range.last == range.first) continue;
    if (range.last > range.first + 1) body += '-';
    body += ClassCodePoint(range.last);
  }
  return body;
}

}  // namespace

CodePointSet CodePointSet::Range(char32_t first, char32_t last) {
  CodePointSet set;
  set.Add(first, last);
  return set;
}

void CodePointSet::Add(char32_t first, char32_t last) {
  if (first > last) return;
  std::vector<CodePointRange> merged;
  merged.reserve(ranges_.size() + 1);
  bool placed = false;
  for (const CodePointRange& range : ranges_) {
    if (range.last + 1 < first) {
      merged.push_back(range);
    } else if (last + 1 < range.first) {
      if (!placed) merged.push_back({first, last});
      placed = true;
      merged.push_back(range);
    } else {
      first = std::min(first, range.first);
      last = std::max(last, range.last);
    }
  }
  if (!placed) merged.push_back({first, last});
  ranges_ = std::move(merged);
}

void CodePointSet::Add(const CodePointSet& other) {
  for (const CodePointRange& range : other.ranges_) Add(range.first, range.last);
}

CodePointSet CodePointSet::Complement() const {
  CodePointSet result;
  char32_t next = 0;
  for (const CodePointRange& range : ranges_) {
    if (range.first > next) result.Add(next, range.first - 1);
    next = range.last + 1;
  }
  if (next <= kMaxCodePoint) result.Add(next, kMaxCodePoint);
  return result;
}

CodePointSet CodePointSet::Intersect(const CodePointSet& other) const {
  CodePointSet result;
  for (const CodePointRange& a : ranges_) {
    for (const CodePointRange& b : other.ranges_) {
      result.Add(std::max(a.first, b.first), std::min(a.last, b.last));
    }
  }
  return result;
}

CodePointSet CodePointSet::Minus(const CodePointSet& other) const {
  return Intersect(other.Complement());
}

bool CodePointSet::Contains(char32_t code_point) const {
  return std::any_of(ranges_.begin(), ranges_.end(), [&](const CodePointRange& range) {
    return range.first <= code_point && code_point <= range.last;
  });
}

std::optional<char32_t> CodePointSet::Single() const {
  if (ranges_.size() == 1 && ranges_[0].first == ranges_[0].last) return ranges_[0].first;
  return std::nullopt;
}

std::optional<std::u32string> DecodeUtf8(std::string_view text) {
  std::u32string code_points;
  code_points.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    int num_continuation = 0;
    char32_t code_point = 0;
    char32_t min_value = 0;
    if (lead < 0x80) {
      code_point = lead;
    } else if ((lead & 0xE0) == 0xC0) {
      num_continuation = 1, code_point = lead & 0x1F, min_value = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      num_continuation = 2, code_point = lead & 0x0F, min_value = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      num_continuation = 3, code_point = lead & 0x07, min_value = 0x10000;
    } else {
      return std::nullopt;
    }
    if (i + num_continuation >= text.size() && num_continuation > 0) return std::nullopt;
    for (int k = 1; k <= num_continuation; ++k) {
      const auto byte = static_cast<unsigned char>(text[i + k]);
      if ((byte & 0xC0) != 0x80) return std::nullopt;
      code_point = (code_point << 6) | (byte & 0x3F);
    }
    if (code_point < min_value || code_point > kMaxCodePoint ||
        (code_point >= kFirstSurrogate && code_point <= kLastSurrogate)) {
      return std::nullopt;
    }
    code_points.push_back(code_point);
    i += num_continuation + 1;
  }
  return code_points;
}

std::string GbnfLiteral(std::string_view text) {
  std::string literal = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        literal += "\\\"";
        break;
      case '\\':
        literal += "\\\\";
        break;
      case '\n':
        literal += "\\n";
        break;
      case '\r':
        literal += "\\r";
        break;
      case '\t':
        literal += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
          literal += HexEscape(static_cast<unsigned char>(c));
        } else {
          literal += c;
        }
    }
  }
  return literal + "\"";
}

std::string GbnfCharClass(const CodePointSet& set) {
  const CodePointSet complement = set.Complement();
  // Surrogates never occur in UTF-8 text: a set missing only them still matches everything.
  if (complement.Minus(CodePointSet::Range(kFirstSurrogate, kLastSurrogate)).empty()) return ".";
  std::string positive = "[" + ClassBody(set.ranges()) + "]";
  std::string negative = "[^" + ClassBody(complement.ranges()) + "]";
  return negative.size() < positive.size() ? negative : positive;
}

std::string GbnfCodePoints(const CodePointSet& set) {
  if (std::optional<char32_t> single = set.Single()) {
    std::string utf8;
    AppendUtf8(*single, &utf8);
    return GbnfLiteral(utf8);
  }
  return GbnfCharClass(set);
}

std::string JoinGbnfAlternatives(const std::vector<std::string>& alternatives) {
  return Join(alternatives, " | ");
}

}  // namespace vllm
