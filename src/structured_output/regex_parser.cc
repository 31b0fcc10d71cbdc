// Regular expression parser: pattern text → RegexNode tree (see regex_parser.h for the syntax).
#include "structured_output/regex_parser.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

namespace vllm {
namespace {

CodePointSet DigitSet() { return CodePointSet::Range('0', '9'); }

CodePointSet WordSet() {
  CodePointSet set = CodePointSet::Range('a', 'z');
  set.Add('A', 'Z');
  set.Add('0', '9');
  set.Add('_', '_');
  return set;
}

// ASCII whitespace and the Unicode space separators that Python and JavaScript agree on.
CodePointSet SpaceSet() {
  CodePointSet set = CodePointSet::Range('\t', '\r');  // \t \n \v \f \r
  set.Add(' ', ' ');
  set.Add(0xA0, 0xA0);
  set.Add(0x1680, 0x1680);
  set.Add(0x2000, 0x200A);
  set.Add(0x2028, 0x2029);
  set.Add(0x202F, 0x202F);
  set.Add(0x205F, 0x205F);
  set.Add(0x3000, 0x3000);
  return set;
}

int HexValue(char32_t c) {
  if (c >= '0' && c <= '9') return static_cast<int>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<int>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<int>(c - 'A' + 10);
  return -1;
}

bool IsAsciiLetterOrDigit(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

RegexNode CodePointsNode(CodePointSet set) {
  RegexNode node;
  node.kind = RegexNode::Kind::kCodePoints;
  node.code_points = std::move(set);
  return node;
}

// A sequence or alternation of `children`, or the only child itself.
RegexNode Combine(RegexNode::Kind kind, std::vector<RegexNode> children) {
  if (children.size() == 1) return std::move(children[0]);
  RegexNode node;
  node.kind = kind;
  node.children = std::move(children);
  return node;
}

class RegexParser {
 public:
  explicit RegexParser(std::u32string pattern) : pattern_(std::move(pattern)) {}

  Expected<RegexNode> Parse() {
    auto parsed = ParseAlternation(/*at_start=*/true, /*depth=*/0);
    if (!parsed) return Error{parsed.error()};
    if (pos_ < pattern_.size()) return Fail("unbalanced ')'");
    return std::move(parsed->node);
  }

 private:
  // A parsed piece, and whether it ends in `$` (so nothing may follow it).
  struct Piece {
    RegexNode node;
    bool anchored_end = false;
  };

  Error Fail(const std::string& message) const {
    return Error{"regex: " + message + " at position " + std::to_string(pos_)};
  }

  bool AtEnd() const { return pos_ >= pattern_.size(); }
  char32_t Peek(size_t ahead = 0) const {
    return pos_ + ahead < pattern_.size() ? pattern_[pos_ + ahead] : U'\0';
  }
  bool HasAhead(size_t ahead) const { return pos_ + ahead < pattern_.size(); }

  Expected<Piece> ParseAlternation(bool at_start, int depth) {
    if (depth > kMaxRegexNesting) {
      return Fail("groups nest deeper than " + std::to_string(kMaxRegexNesting) + " levels");
    }
    std::vector<RegexNode> branches;
    bool anchored_end = false;
    while (true) {
      auto branch = ParseSequence(at_start, depth);
      if (!branch) return branch;
      anchored_end = anchored_end || branch->anchored_end;
      branches.push_back(std::move(branch->node));
      if (AtEnd() || Peek() != '|') break;
      ++pos_;
    }
    return Piece{Combine(RegexNode::Kind::kAlternation, std::move(branches)), anchored_end};
  }

  Expected<Piece> ParseSequence(bool at_start, int depth) {
    std::vector<RegexNode> items;
    bool anchored_end = false;
    while (!AtEnd() && Peek() != '|' && Peek() != ')') {
      const char32_t c = Peek();
      const bool is_end_anchor = c == '$' || (c == '\\' && (Peek(1) == 'Z' || Peek(1) == 'z'));
      const bool is_start_anchor = c == '^' || (c == '\\' && Peek(1) == 'A');
      if (is_end_anchor) {
        pos_ += c == '$' ? 1 : 2;
        anchored_end = true;
        if (auto error = RefuseQuantifier("an anchor")) return *error;
        continue;
      }
      if (anchored_end) return Fail("'$' is only supported at the end of the pattern");
      if (is_start_anchor) {
        if (!at_start || !items.empty()) {
          return Fail("'^' is only supported at the start of the pattern");
        }
        pos_ += c == '^' ? 1 : 2;
        if (auto error = RefuseQuantifier("an anchor")) return *error;
        continue;
      }
      if (IsQuantifierStart()) return Fail("nothing to repeat");
      auto atom = ParseAtom(at_start && items.empty(), depth);
      if (!atom) return atom;
      if (atom->anchored_end) {
        anchored_end = true;
        if (auto error = RefuseQuantifier("a group ending in '$'")) return *error;
        items.push_back(std::move(atom->node));
        continue;
      }
      auto repeated = ParseQuantifiers(std::move(atom->node));
      if (!repeated) return Error{repeated.error()};
      items.push_back(std::move(*repeated));
    }
    return Piece{Combine(RegexNode::Kind::kSequence, std::move(items)), anchored_end};
  }

  std::optional<Error> RefuseQuantifier(const std::string& what) {
    if (IsQuantifierStart()) return Fail("a quantifier cannot follow " + what);
    return std::nullopt;
  }

  // Whether a quantifier starts here: * + ? or a well-formed {m} {m,} {m,n} {,n}.
  bool IsQuantifierStart() {
    if (AtEnd()) return false;
    const char32_t c = Peek();
    if (c == '*' || c == '+' || c == '?') return true;
    if (c != '{') return false;
    const size_t saved = pos_;
    const bool valid = ParseBraces().has_value();
    pos_ = saved;
    return valid;
  }

  // Reads {m} {m,} {m,n} {,n} at pos_; nullopt (pos_ unspecified) when it is not one, in which
  // case the `{` is a literal, as in Python. Counts above the limit saturate (refused later).
  std::optional<std::pair<int64_t, int64_t>> ParseBraces() {
    ++pos_;  // '{'
    auto read_number = [this]() -> std::optional<int64_t> {
      if (AtEnd() || Peek() < '0' || Peek() > '9') return std::nullopt;
      int64_t value = 0;
      while (!AtEnd() && Peek() >= '0' && Peek() <= '9') {
        value = std::min<int64_t>(value * 10 + (Peek() - '0'), int64_t{1} << 40);
        ++pos_;
      }
      return value;
    };
    std::optional<int64_t> min_count = read_number();
    if (!AtEnd() && Peek() == '}') {
      if (!min_count) return std::nullopt;
      ++pos_;
      return std::make_pair(*min_count, *min_count);
    }
    if (AtEnd() || Peek() != ',') return std::nullopt;
    ++pos_;
    std::optional<int64_t> max_count = read_number();
    if (AtEnd() || Peek() != '}') return std::nullopt;
    if (!min_count && !max_count) return std::nullopt;
    ++pos_;
    return std::make_pair(min_count.value_or(0), max_count.value_or(RegexNode::kUnbounded));
  }

  Expected<RegexNode> ParseQuantifiers(RegexNode atom) {
    if (!IsQuantifierStart()) return atom;
    int64_t min_count = 0;
    int64_t max_count = RegexNode::kUnbounded;
    const char32_t c = Peek();
    if (c == '{') {
      const size_t start = pos_;
      const auto counts = ParseBraces();
      min_count = counts->first;
      max_count = counts->second;
      // The quantifier as written (digits and a comma), for messages: its counts saturate.
      const std::string written(pattern_.begin() + static_cast<std::ptrdiff_t>(start),
                                pattern_.begin() + static_cast<std::ptrdiff_t>(pos_));
      if (max_count != RegexNode::kUnbounded && min_count > max_count) {
        return Fail("quantifier " + written + ": the minimum is above the maximum");
      }
      if (min_count > kMaxRegexRepeatCount || max_count > kMaxRegexRepeatCount) {
        return Fail("quantifier " + written + ": a count above " +
                    std::to_string(kMaxRegexRepeatCount) + " is not supported");
      }
    } else {
      ++pos_;
      min_count = c == '+' ? 1 : 0;
      max_count = c == '?' ? 1 : RegexNode::kUnbounded;
    }
    if (!AtEnd() && Peek() == '?') {
      ++pos_;  // lazy: the same language
    } else if (!AtEnd() && Peek() == '+') {
      return Fail("possessive quantifiers are not supported");
    }
    if (IsQuantifierStart()) return Fail("multiple repeat");
    RegexNode node;
    node.kind = RegexNode::Kind::kRepeat;
    node.min_count = static_cast<int>(min_count);
    node.max_count = static_cast<int>(max_count);
    node.children.push_back(std::move(atom));
    return node;
  }

  Expected<Piece> ParseAtom(bool at_start, int depth) {
    const char32_t c = Peek();
    if (c == '(') return ParseGroup(at_start, depth);
    if (c == '[') {
      auto set = ParseClass();
      if (!set) return Error{set.error()};
      return Piece{CodePointsNode(std::move(*set))};
    }
    if (c == '.') {
      ++pos_;
      return Piece{CodePointsNode(CodePointSet::Of('\n').Complement())};
    }
    if (c == '\\') {
      const char32_t next = Peek(1);
      if (next == 'b' || next == 'B') return Fail("word boundaries (\\b, \\B) are not supported");
      if (next == 'G') return Fail("\\G is not supported");
      if ((next >= '1' && next <= '9') || next == 'k') {
        return Fail("backreferences are not supported");
      }
      auto set = ParseEscape(/*in_class=*/false);
      if (!set) return Error{set.error()};
      return Piece{CodePointsNode(std::move(*set))};
    }
    ++pos_;
    return Piece{CodePointsNode(CodePointSet::Of(c))};
  }

  Expected<Piece> ParseGroup(bool at_start, int depth) {
    ++pos_;  // '('
    if (!AtEnd() && Peek() == '?') {
      const char32_t kind = Peek(1);
      if (kind == ':') {
        pos_ += 2;
      } else if (kind == '#') {
        while (!AtEnd() && Peek() != ')') ++pos_;
        if (AtEnd()) return Fail("unterminated comment");
        ++pos_;
        return Piece{RegexNode{}};
      } else if (kind == '=' || kind == '!') {
        return Fail("lookahead assertions are not supported");
      } else if (kind == '<' && (Peek(2) == '=' || Peek(2) == '!')) {
        return Fail("lookbehind assertions are not supported");
      } else if (kind == 'P' && Peek(2) == '=') {
        return Fail("backreferences are not supported");
      } else if (kind == '<' || (kind == 'P' && Peek(2) == '<')) {
        pos_ += kind == '<' ? 2 : 3;
        const size_t name_start = pos_;
        while (!AtEnd() && (IsAsciiLetterOrDigit(Peek()) || Peek() == '_')) ++pos_;
        if (AtEnd() || Peek() != '>' || pos_ == name_start) return Fail("bad group name");
        ++pos_;
      } else if (kind == '>') {
        return Fail("atomic groups are not supported");
      } else if (kind == '(') {
        return Fail("conditional groups are not supported");
      } else {
        return Fail("inline flags such as (?i) are not supported");
      }
    }
    auto inner = ParseAlternation(at_start, depth + 1);
    if (!inner) return inner;
    if (AtEnd() || Peek() != ')') return Fail("missing ')'");
    ++pos_;
    return inner;
  }

  // A class [...] or [^...]; a `]` first in it is a literal, as in Python.
  Expected<CodePointSet> ParseClass() {
    ++pos_;  // '['
    bool negated = false;
    if (!AtEnd() && Peek() == '^') {
      negated = true;
      ++pos_;
    }
    CodePointSet set;
    bool first = true;
    while (true) {
      if (AtEnd()) return Fail("unterminated character class");
      if (Peek() == ']' && !first) {
        ++pos_;
        break;
      }
      first = false;
      auto low = ParseClassItem();
      if (!low) return Error{low.error()};
      const bool is_range = Peek() == '-' && HasAhead(1) && Peek(1) != ']';
      if (!is_range) {
        set.Add(*low);
        continue;
      }
      ++pos_;  // '-'
      auto high = ParseClassItem();
      if (!high) return Error{high.error()};
      const std::optional<char32_t> first_code_point = low->Single();
      const std::optional<char32_t> last_code_point = high->Single();
      if (!first_code_point || !last_code_point || *first_code_point > *last_code_point) {
        return Fail("bad character range");
      }
      set.Add(*first_code_point, *last_code_point);
    }
    if (negated) set = set.Complement();
    if (set.empty()) return Fail("the character class matches nothing");
    return set;
  }

  Expected<CodePointSet> ParseClassItem() {
    if (Peek() == '\\') return ParseEscape(/*in_class=*/true);
    return CodePointSet::Of(pattern_[pos_++]);
  }

  // An escape at pos_ (a backslash), as a set of code points.
  Expected<CodePointSet> ParseEscape(bool in_class) {
    if (!HasAhead(1)) return Fail("the pattern ends in a lone backslash");
    const char32_t c = Peek(1);
    pos_ += 2;
    switch (c) {
      case 'd':
        return DigitSet();
      case 'D':
        return DigitSet().Complement();
      case 'w':
        return WordSet();
      case 'W':
        return WordSet().Complement();
      case 's':
        return SpaceSet();
      case 'S':
        return SpaceSet().Complement();
      case 'n':
        return CodePointSet::Of('\n');
      case 't':
        return CodePointSet::Of('\t');
      case 'r':
        return CodePointSet::Of('\r');
      case 'f':
        return CodePointSet::Of('\f');
      case 'v':
        return CodePointSet::Of('\v');
      case 'a':
        return CodePointSet::Of('\a');
      case 'b':
        if (in_class) return CodePointSet::Of('\b');
        break;
      case '0': {
        char32_t value = 0;
        for (int i = 0; i < 2 && !AtEnd() && Peek() >= '0' && Peek() <= '7'; ++i) {
          value = value * 8 + (pattern_[pos_++] - '0');
        }
        return CodePointSet::Of(value);
      }
      case 'x':
        return ParseHex(2);
      case 'u':
        if (!AtEnd() && Peek() == '{') return ParseBracedHex();
        return ParseHex(4);
      case 'U':
        return ParseHex(8);
      case 'c': {
        const char32_t letter = Peek();
        if (!((letter >= 'a' && letter <= 'z') || (letter >= 'A' && letter <= 'Z'))) {
          return Fail("\\c must be followed by a letter");
        }
        ++pos_;
        return CodePointSet::Of(letter % 32);
      }
      case 'p':
      case 'P':
        return Fail("Unicode property classes (\\p, \\P) are not supported");
      case 'N':
        return Fail("named characters (\\N{...}) are not supported");
      default:
        break;
    }
    if (c < 0x80 && IsAsciiLetterOrDigit(c)) {
      pos_ -= 2;
      std::string name = "\\";
      AppendUtf8(c, &name);
      return Fail("bad escape " + name);
    }
    return CodePointSet::Of(c);
  }

  Expected<CodePointSet> ParseHex(int num_digits) {
    char32_t value = 0;
    for (int i = 0; i < num_digits; ++i) {
      const int digit = HexValue(Peek());
      if (AtEnd() || digit < 0) return Fail("incomplete hex escape");
      value = value * 16 + static_cast<char32_t>(digit);
      ++pos_;
    }
    return CheckedCodePoint(value);
  }

  Expected<CodePointSet> ParseBracedHex() {
    ++pos_;  // '{'
    char32_t value = 0;
    int num_digits = 0;
    while (!AtEnd() && HexValue(Peek()) >= 0 && num_digits < 8) {
      value = value * 16 + static_cast<char32_t>(HexValue(Peek()));
      ++num_digits;
      ++pos_;
    }
    if (num_digits == 0 || AtEnd() || Peek() != '}') return Fail("bad \\u{...} escape");
    ++pos_;
    return CheckedCodePoint(value);
  }

  Expected<CodePointSet> CheckedCodePoint(char32_t value) {
    if (value > kMaxCodePoint) return Fail("code point above U+10FFFF");
    if (value >= 0xD800 && value <= 0xDFFF) {
      return Fail("surrogate code points cannot occur in UTF-8 text");
    }
    return CodePointSet::Of(value);
  }

  std::u32string pattern_;
  size_t pos_ = 0;
};

}  // namespace

Expected<RegexNode> ParseRegex(std::string_view pattern) {
  std::optional<std::u32string> code_points = DecodeUtf8(pattern);
  if (!code_points) return Error{"regex: the pattern is not valid UTF-8"};
  return RegexParser(std::move(*code_points)).Parse();
}

}  // namespace vllm
