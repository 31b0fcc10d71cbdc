// GBNF parser: recursive descent over the text (group nesting bounded), building rules of
// code point classes and rule references. Quantifiers become helper rules:
//   x*      -> S        S ::= x S | ""
//   x+      -> x S      (S as for x*)
//   x?      -> O        O ::= x | ""
//   x{m,n}  -> x..x O1  (m copies)  O1 ::= x O2 | "" ... O(n-m) ::= x | ""
//   x{m,}   -> x..x S   (m copies)
// where x is one element (a multi-element literal is first made a helper rule), so the element
// count stays linear in the repetition counts, and every helper recursion is a tail call.
#include "structured_output/gbnf_parser.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "structured_output/compile_deadline.h"

namespace vllm {
namespace {

constexpr int kMaxGroupNesting = 512;
constexpr uint32_t kFirstSurrogate = 0xD800;
constexpr uint32_t kLastSurrogate = 0xDFFF;

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Sorts and merges ranges, and removes the surrogates (no UTF-8 text holds them).
std::vector<UnicodeRange> NormalizeRanges(std::vector<UnicodeRange> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const UnicodeRange& a, const UnicodeRange& b) { return a.first < b.first; });
  std::vector<UnicodeRange> merged;
  for (const UnicodeRange& range : ranges) {
    if (!merged.empty() && range.first <= merged.back().last + 1) {
      merged.back().last = std::max(merged.back().last, range.last);
    } else {
      merged.push_back(range);
    }
  }
  std::vector<UnicodeRange> without_surrogates;
  for (const UnicodeRange& range : merged) {
    if (range.last < kFirstSurrogate || range.first > kLastSurrogate) {
      without_surrogates.push_back(range);
      continue;
    }
    if (range.first < kFirstSurrogate)
      without_surrogates.push_back({range.first, kFirstSurrogate - 1});
    if (range.last > kLastSurrogate) without_surrogates.push_back({kLastSurrogate + 1, range.last});
  }
  return without_surrogates;
}

std::vector<UnicodeRange> Complement(const std::vector<UnicodeRange>& ranges) {
  std::vector<UnicodeRange> complement;
  uint32_t next = 0;
  for (const UnicodeRange& range : ranges) {
    if (range.first > next) complement.push_back({next, range.first - 1});
    next = range.last + 1;
  }
  if (next <= kMaxUnicodeScalar) complement.push_back({next, kMaxUnicodeScalar});
  return NormalizeRanges(std::move(complement));
}

class GbnfParser {
 public:
  GbnfParser(std::string_view text, const GrammarLimits& limits) : text_(text), limits_(limits) {}

  Expected<Grammar> Parse() {
    SkipSpace();
    while (ok() && pos_ < text_.size()) {
      ParseRule();
      SkipSpace();
    }
    if (!ok()) return Error{*error_};
    for (size_t rule_id = 0; rule_id < grammar_.rules.size(); ++rule_id) {
      if (!rule_defined_[rule_id]) {
        return Error{"undefined rule `" + grammar_.rules[rule_id].name + "` (" +
                     Where(first_reference_[rule_id]) + ")"};
      }
    }
    auto root = rule_ids_.find("root");
    if (root == rule_ids_.end()) return Error{"grammar has no `root` rule"};
    grammar_.root_rule_id = root->second;
    return std::move(grammar_);
  }

 private:
  bool ok() const { return !error_.has_value(); }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }

  std::string Where(size_t offset) const {
    int line = 1;
    int column = 1;
    for (size_t i = 0; i < offset && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else if ((static_cast<uint8_t>(text_[i]) & 0xC0) != 0x80) {
        ++column;
      }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
  }

  // Records the first error, at `offset`; returns false for the caller to pass on.
  bool Fail(size_t offset, const std::string& message) {
    if (ok()) error_ = Where(offset) + ": " + message;
    return false;
  }

  bool CountElements(size_t count) {
    if (CompileInterrupted()) return Fail(pos_, "compile interrupted");
    num_elements_ += count;
    if (num_elements_ <= limits_.max_grammar_elements) return true;
    return Fail(pos_, "grammar too large: more than " +
                          std::to_string(limits_.max_grammar_elements) +
                          " elements after expanding repetitions");
  }

  // Skips spaces, tabs, newlines and comments.
  void SkipSpace() {
    while (!AtEnd()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        ++pos_;
      } else if (c == '#') {
        while (!AtEnd() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  std::string_view ParseName() {
    const size_t begin = pos_;
    while (!AtEnd() && IsNameChar(text_[pos_])) ++pos_;
    return text_.substr(begin, pos_ - begin);
  }

  // A rule name followed by `::=` starts at the current position (the current rule ends).
  bool AtRuleStart() const {
    size_t i = pos_;
    while (i < text_.size() && IsNameChar(text_[i])) ++i;
    if (i == pos_) return false;
    while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t')) ++i;
    return text_.substr(i, 3) == "::=";
  }

  int32_t RuleId(std::string_view name, size_t reference_offset) {
    auto [it, inserted] = rule_ids_.emplace(std::string(name), 0);
    if (inserted) {
      it->second = AddRule(std::string(name), -1);
      first_reference_[it->second] = reference_offset;
    }
    return it->second;
  }

  int32_t AddRule(std::string name, int32_t defined_by_rule_id) {
    grammar_.rules.push_back(GrammarRule{
        .name = std::move(name), .alternatives = {}, .defined_by_rule_id = defined_by_rule_id});
    rule_defined_.push_back(defined_by_rule_id >= 0);
    first_reference_.push_back(pos_);
    return static_cast<int32_t>(grammar_.rules.size()) - 1;
  }

  int32_t AddHelperRule() {
    return AddRule(grammar_.rules[current_rule_id_].name + "#" + std::to_string(++num_helpers_),
                   current_rule_id_);
  }

  void ParseRule() {
    const size_t name_offset = pos_;
    const std::string_view name = ParseName();
    if (name.empty()) {
      Fail(pos_, "expected a rule name");
      return;
    }
    while (Peek() == ' ' || Peek() == '\t') ++pos_;
    if (text_.substr(pos_, 3) != "::=") {
      Fail(pos_, "expected `::=` after rule name `" + std::string(name) + "`");
      return;
    }
    pos_ += 3;
    current_rule_id_ = RuleId(name, name_offset);
    if (rule_defined_[current_rule_id_]) {
      Fail(name_offset, "rule `" + std::string(name) + "` is defined twice");
      return;
    }
    rule_defined_[current_rule_id_] = true;
    num_helpers_ = 0;
    ParseAlternatives(current_rule_id_, /*nesting=*/0);
    if (ok() && Peek() == ')') Fail(pos_, "unexpected `)` with no group open");
  }

  // Alternatives separated by `|`, added to `rule_id`; stops before `)`, the next rule or the end.
  void ParseAlternatives(int32_t rule_id, int nesting) {
    while (ok()) {
      GrammarSequence sequence = ParseSequence(nesting);
      if (!ok()) return;
      grammar_.rules[rule_id].alternatives.push_back(std::move(sequence));
      SkipSpace();
      if (Peek() != '|') return;
      ++pos_;
    }
  }

  GrammarSequence ParseSequence(int nesting) {
    GrammarSequence sequence;
    while (ok()) {
      SkipSpace();
      if (AtEnd() || Peek() == '|' || Peek() == ')' || (nesting == 0 && AtRuleStart())) break;
      std::optional<GrammarSequence> item = ParseItem(nesting);
      if (!item) break;
      SkipSpace();
      while (ok() && (Peek() == '*' || Peek() == '+' || Peek() == '?' || Peek() == '{')) {
        item = ApplyQuantifier(std::move(*item));
        if (!item) break;
        SkipSpace();
      }
      if (!item) break;
      sequence.insert(sequence.end(), item->begin(), item->end());
    }
    return sequence;
  }

  // One literal, class, `.`, rule reference or group: the elements it stands for.
  std::optional<GrammarSequence> ParseItem(int nesting) {
    const char c = Peek();
    if (c == '"') return ParseLiteral();
    if (c == '[') return ParseCharClass();
    if (c == '.') {
      ++pos_;
      if (!CountElements(1)) return std::nullopt;
      return GrammarSequence{AddCharacter({{0, kMaxUnicodeScalar}})};
    }
    if (c == '(') {
      const size_t open_offset = pos_;
      if (nesting + 1 > kMaxGroupNesting) {
        Fail(pos_, "groups nested more than " + std::to_string(kMaxGroupNesting) + " deep");
        return std::nullopt;
      }
      ++pos_;
      const int32_t group_rule_id = AddHelperRule();
      ParseAlternatives(group_rule_id, nesting + 1);
      if (!ok()) return std::nullopt;
      if (Peek() != ')') {
        Fail(pos_, "expected `)` to close the group opened at " + Where(open_offset));
        return std::nullopt;
      }
      ++pos_;
      if (!CountElements(1)) return std::nullopt;
      return GrammarSequence{RuleRef(group_rule_id)};
    }
    if (IsNameChar(c)) {
      const size_t name_offset = pos_;
      const std::string_view name = ParseName();
      if (!CountElements(1)) return std::nullopt;
      return GrammarSequence{RuleRef(RuleId(name, name_offset))};
    }
    if (c == '*' || c == '+' || c == '?' || c == '{') {
      Fail(pos_, std::string("quantifier `") + c + "` with nothing to repeat");
    } else if (c == ':' && text_.substr(pos_, 3) == "::=") {
      Fail(pos_, "`::=` must follow a rule name");
    } else {
      Fail(pos_, "unexpected character `" + std::string(1, c) + "`");
    }
    return std::nullopt;
  }

  static GrammarElement RuleRef(int32_t rule_id) {
    return GrammarElement{.kind = GrammarElement::Kind::kRuleRef, .rule_id = rule_id};
  }

  GrammarElement AddCharacter(std::vector<UnicodeRange> ranges) {
    ranges = NormalizeRanges(std::move(ranges));
    GrammarElement element{.kind = GrammarElement::Kind::kCharacter,
                           .ranges_begin = static_cast<uint32_t>(grammar_.class_ranges.size()),
                           .ranges_count = static_cast<uint32_t>(ranges.size())};
    grammar_.class_ranges.insert(grammar_.class_ranges.end(), ranges.begin(), ranges.end());
    return element;
  }

  // One UTF-8 encoded code point of the text.
  std::optional<uint32_t> ParseRawCodePoint() {
    const size_t begin = pos_;
    const uint8_t lead = static_cast<uint8_t>(text_[pos_]);
    int length = 0;
    uint32_t code_point = 0;
    if (lead < 0x80) {
      length = 1;
      code_point = lead;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
      code_point = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      code_point = lead & 0x0F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      code_point = lead & 0x07;
    }
    if (length == 0 || begin + length > text_.size()) {
      Fail(begin, "invalid UTF-8");
      return std::nullopt;
    }
    for (int i = 1; i < length; ++i) {
      const uint8_t byte = static_cast<uint8_t>(text_[begin + i]);
      if ((byte & 0xC0) != 0x80) {
        Fail(begin, "invalid UTF-8");
        return std::nullopt;
      }
      code_point = (code_point << 6) | (byte & 0x3F);
    }
    static constexpr uint32_t kSmallestOfLength[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code_point < kSmallestOfLength[length] || code_point > kMaxUnicodeScalar ||
        (code_point >= kFirstSurrogate && code_point <= kLastSurrogate)) {
      Fail(begin, "invalid UTF-8");
      return std::nullopt;
    }
    pos_ += length;
    return code_point;
  }

  // One character of a literal or class, escapes decoded; `where` names the construct, which
  // opened at `open_offset`.
  std::optional<uint32_t> ParseCodePoint(const char* where, size_t open_offset) {
    if (AtEnd() || Peek() == '\n') {
      Fail(open_offset, std::string("unterminated ") + where);
      return std::nullopt;
    }
    if (Peek() != '\\') return ParseRawCodePoint();
    const size_t escape_offset = pos_;
    ++pos_;
    if (AtEnd()) {
      Fail(open_offset, std::string("unterminated ") + where);
      return std::nullopt;
    }
    const char c = text_[pos_];
    ++pos_;
    switch (c) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case 'f':
        return '\f';
      case 'v':
        return '\v';
      case '0':
        return 0;
      case '\\':
      case '"':
      case '\'':
      case '[':
      case ']':
      case '-':
      case '^':
      case '/':
        return static_cast<uint32_t>(c);
      case 'x':
        return ParseHexEscape(escape_offset, 2);
      case 'u':
        return ParseHexEscape(escape_offset, 4);
      case 'U':
        return ParseHexEscape(escape_offset, 8);
      default:
        Fail(escape_offset, "unknown escape `\\" + std::string(1, c) + "`");
        return std::nullopt;
    }
  }

  std::optional<uint32_t> ParseHexEscape(size_t escape_offset, int num_digits) {
    uint32_t code_point = 0;
    for (int i = 0; i < num_digits; ++i) {
      const int digit = HexDigitValue(Peek());
      if (digit < 0) {
        Fail(escape_offset, "escape `\\" + std::string(1, text_[escape_offset + 1]) + "` needs " +
                                std::to_string(num_digits) + " hex digits");
        return std::nullopt;
      }
      code_point = (code_point << 4) | static_cast<uint32_t>(digit);
      ++pos_;
    }
    if (code_point > kMaxUnicodeScalar) {
      Fail(escape_offset, "code point past U+10FFFF");
      return std::nullopt;
    }
    if (code_point >= kFirstSurrogate && code_point <= kLastSurrogate) {
      Fail(escape_offset, "surrogate code point (not a character)");
      return std::nullopt;
    }
    return code_point;
  }

  std::optional<GrammarSequence> ParseLiteral() {
    const size_t open_offset = pos_;
    ++pos_;  // the opening quote
    GrammarSequence sequence;
    while (ok() && Peek() != '"') {
      std::optional<uint32_t> code_point = ParseCodePoint("string literal", open_offset);
      if (!code_point || !CountElements(1)) return std::nullopt;
      sequence.push_back(AddCharacter({{*code_point, *code_point}}));
    }
    if (!ok()) return std::nullopt;
    ++pos_;  // the closing quote
    return sequence;
  }

  std::optional<GrammarSequence> ParseCharClass() {
    const size_t open_offset = pos_;
    ++pos_;  // [
    const bool negated = Peek() == '^';
    if (negated) ++pos_;
    std::vector<UnicodeRange> ranges;
    while (ok() && Peek() != ']') {
      const size_t range_offset = pos_;
      std::optional<uint32_t> first = ParseCodePoint("character class", open_offset);
      if (!first) return std::nullopt;
      uint32_t last = *first;
      if (Peek() == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
        ++pos_;
        std::optional<uint32_t> range_last = ParseCodePoint("character class", open_offset);
        if (!range_last) return std::nullopt;
        if (*range_last < *first) {
          Fail(range_offset, "character range out of order");
          return std::nullopt;
        }
        last = *range_last;
      }
      ranges.push_back({*first, last});
    }
    if (!ok()) return std::nullopt;
    ++pos_;  // ]
    if (!CountElements(1)) return std::nullopt;
    ranges = NormalizeRanges(std::move(ranges));
    if (negated) ranges = Complement(ranges);
    return GrammarSequence{AddCharacter(std::move(ranges))};
  }

  // A decimal repetition count, at most max_repetition_count.
  std::optional<size_t> ParseCount() {
    const size_t begin = pos_;
    size_t count = 0;
    while (Peek() >= '0' && Peek() <= '9') {
      count = count * 10 + static_cast<size_t>(Peek() - '0');
      if (count > limits_.max_repetition_count) {
        Fail(begin, "repetition count too large (at most " +
                        std::to_string(limits_.max_repetition_count) + ")");
        return std::nullopt;
      }
      ++pos_;
    }
    if (pos_ == begin) return std::nullopt;
    return count;
  }

  void SkipHorizontalSpace() {
    while (Peek() == ' ' || Peek() == '\t') ++pos_;
  }

  std::optional<GrammarSequence> ApplyQuantifier(GrammarSequence item) {
    const size_t quantifier_offset = pos_;
    const char quantifier = Peek();
    ++pos_;
    size_t min_count = 0;
    std::optional<size_t> max_count;  // nullopt: unbounded
    if (quantifier == '+') {
      min_count = 1;
    } else if (quantifier == '?') {
      max_count = 1;
    } else if (quantifier == '{') {
      SkipHorizontalSpace();
      std::optional<size_t> first = ParseCount();
      if (!ok()) return std::nullopt;
      SkipHorizontalSpace();
      if (Peek() == ',') {
        ++pos_;
        SkipHorizontalSpace();
        max_count = ParseCount();
        if (!ok()) return std::nullopt;
        SkipHorizontalSpace();
      } else {
        max_count = first;
      }
      if (Peek() != '}' || (!first && !max_count)) {
        Fail(quantifier_offset, "expected `{m}`, `{m,}`, `{m,n}` or `{,n}`");
        return std::nullopt;
      }
      ++pos_;
      min_count = first.value_or(0);
      if (max_count && *max_count < min_count) {
        Fail(quantifier_offset, "repetition `{m,n}` with m > n");
        return std::nullopt;
      }
    }
    // The repeated element: the item itself, or a helper rule holding it.
    GrammarElement element;
    if (item.size() == 1) {
      element = item[0];
    } else {
      const int32_t item_rule_id = AddHelperRule();
      grammar_.rules[item_rule_id].alternatives.push_back(std::move(item));
      if (!CountElements(1)) return std::nullopt;
      element = RuleRef(item_rule_id);
    }
    const size_t num_optional = max_count ? *max_count - min_count : 0;
    if (!CountElements(min_count + 3 * num_optional + 3)) return std::nullopt;
    GrammarSequence repeated(min_count, element);
    if (!max_count) {
      const int32_t star_rule_id = AddHelperRule();
      grammar_.rules[star_rule_id].alternatives = {{element, RuleRef(star_rule_id)}, {}};
      repeated.push_back(RuleRef(star_rule_id));
    } else if (num_optional > 0) {
      // Built from the innermost: O(k) ::= x O(k+1) | "", the last one x | "".
      std::optional<int32_t> next_rule_id;
      for (size_t i = 0; i < num_optional; ++i) {
        const int32_t optional_rule_id = AddHelperRule();
        GrammarSequence present = {element};
        if (next_rule_id) present.push_back(RuleRef(*next_rule_id));
        grammar_.rules[optional_rule_id].alternatives = {std::move(present), {}};
        next_rule_id = optional_rule_id;
      }
      repeated.push_back(RuleRef(*next_rule_id));
    }
    return repeated;
  }

  std::string_view text_;
  const GrammarLimits& limits_;
  size_t pos_ = 0;
  std::optional<std::string> error_;
  Grammar grammar_;
  std::unordered_map<std::string, int32_t> rule_ids_;  // user rules by name
  std::vector<bool> rule_defined_;                     // [num_rules]
  std::vector<size_t> first_reference_;                // [num_rules]: text offset
  int32_t current_rule_id_ = -1;
  int num_helpers_ = 0;  // helper rules of the current user rule
  size_t num_elements_ = 0;
};

}  // namespace

Expected<Grammar> ParseGbnf(std::string_view text, const GrammarLimits& limits) {
  if (text.size() > limits.max_grammar_bytes) {
    return Error{"grammar too large: " + std::to_string(text.size()) + " bytes (at most " +
                 std::to_string(limits.max_grammar_bytes) + ")"};
  }
  return GbnfParser(text, limits).Parse();
}

}  // namespace vllm
