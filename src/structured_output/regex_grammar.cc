// Regular expression → GBNF: the parsed tree written as one GBNF expression.
#include "structured_output/regex_grammar.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "structured_output/gbnf_text.h"
#include "structured_output/regex_parser.h"

namespace vllm {
namespace {

// The characters a JSON string cannot hold as themselves: controls, `"` and `\`.
CodePointSet JsonEscapedSet() {
  CodePointSet set = CodePointSet::Range(0x00, 0x1F);
  set.Add('"', '"');
  set.Add('\\', '\\');
  return set;
}

// An emitted expression, and whether a quantifier may follow it without parentheses.
struct Emitted {
  std::string text;
  bool atomic = true;
};

std::string Parenthesized(const Emitted& emitted) {
  return emitted.atomic ? emitted.text : "(" + emitted.text + ")";
}

class RegexEmitter {
 public:
  explicit RegexEmitter(RegexTextForm form) : form_(form) {}

  Emitted Emit(const RegexNode& node) const {
    switch (node.kind) {
      case RegexNode::Kind::kCodePoints:
        return EmitCodePoints(node.code_points);
      case RegexNode::Kind::kSequence:
        return EmitSequence(node.children);
      case RegexNode::Kind::kAlternation: {
        std::vector<std::string> alternatives;
        for (const RegexNode& child : node.children) alternatives.push_back(Emit(child).text);
        return {"(" + JoinGbnfAlternatives(alternatives) + ")", true};
      }
      case RegexNode::Kind::kRepeat:
        return EmitRepeat(node);
    }
    return {};
  }

  // The grammar elements `node` expands to once counted repetitions are unrolled, saturating
  // just above kMaxRegexExpandedElements.
  int64_t ExpandedSize(const RegexNode& node) const {
    constexpr int64_t kSaturated = kMaxRegexExpandedElements + 1;
    switch (node.kind) {
      case RegexNode::Kind::kCodePoints:
        return form_ == RegexTextForm::kRaw ? 1 : 8;
      case RegexNode::Kind::kSequence:
      case RegexNode::Kind::kAlternation: {
        int64_t total = 1;
        for (const RegexNode& child : node.children) {
          total = std::min(kSaturated, total + ExpandedSize(child));
        }
        return total;
      }
      case RegexNode::Kind::kRepeat: {
        const int64_t copies =
            node.max_count == RegexNode::kUnbounded ? node.min_count + 1 : node.max_count;
        return std::min(kSaturated,
                        1 + ExpandedSize(node.children[0]) * std::max<int64_t>(1, copies));
      }
    }
    return 0;
  }

 private:
  // A code point written as one fixed piece of text in this form, if it has just one spelling.
  bool HasOneSpelling(char32_t code_point) const {
    if (form_ == RegexTextForm::kRaw) return true;
    return code_point >= 0x20 && code_point != '/';
  }

  void AppendSpelling(char32_t code_point, std::string* text) const {
    if (form_ == RegexTextForm::kJsonStringBody && (code_point == '"' || code_point == '\\')) {
      text->push_back('\\');
    }
    AppendUtf8(code_point, text);
  }

  Emitted EmitCodePoints(const CodePointSet& set) const {
    if (form_ == RegexTextForm::kRaw) return {GbnfCodePoints(set), true};
    std::vector<Emitted> alternatives;
    const CodePointSet unescaped = set.Minus(JsonEscapedSet());
    if (!unescaped.empty()) alternatives.push_back({GbnfCodePoints(unescaped), true});
    if (set.Contains('"')) alternatives.push_back({GbnfLiteral("\\\""), true});
    if (set.Contains('\\')) alternatives.push_back({GbnfLiteral("\\\\"), true});
    if (set.Contains('/')) alternatives.push_back({GbnfLiteral("\\/"), true});
    AppendControlEscapes(set.Intersect(CodePointSet::Range(0x00, 0x1F)), &alternatives);
    if (alternatives.size() == 1) return alternatives[0];
    std::vector<std::string> texts;
    for (const Emitted& alternative : alternatives) texts.push_back(alternative.text);
    return {"(" + JoinGbnfAlternatives(texts) + ")", true};
  }

  // The JSON escapes of the control characters in `controls`: \b \f \n \r \t and \u00XX.
  static void AppendControlEscapes(const CodePointSet& controls,
                                   std::vector<Emitted>* alternatives) {
    if (controls.empty()) return;
    std::string short_escapes;
    for (const auto& [code_point, letter] : {std::pair<char32_t, char>{'\b', 'b'},
                                             {'\f', 'f'},
                                             {'\n', 'n'},
                                             {'\r', 'r'},
                                             {'\t', 't'}}) {
      if (controls.Contains(code_point)) short_escapes.push_back(letter);
    }
    if (short_escapes.size() == 1) {
      alternatives->push_back({GbnfLiteral(std::string("\\") + short_escapes), true});
    } else if (!short_escapes.empty()) {
      alternatives->push_back({GbnfLiteral("\\") + " [" + short_escapes + "]", false});
    }
    // \u00XX: per high digit (0 or 1), a class of the low hex digits in either case.
    for (char32_t high = 0; high <= 1; ++high) {
      CodePointSet low_digits;
      for (char32_t low = 0; low < 16; ++low) {
        if (!controls.Contains(high * 16 + low)) continue;
        if (low < 10) {
          low_digits.Add('0' + low, '0' + low);
        } else {
          low_digits.Add('a' + low - 10, 'a' + low - 10);
          low_digits.Add('A' + low - 10, 'A' + low - 10);
        }
      }
      if (low_digits.empty()) continue;
      const std::string prefix = high == 0 ? "\\u000" : "\\u001";
      alternatives->push_back({GbnfLiteral(prefix) + " " + GbnfCodePoints(low_digits), false});
    }
  }

  Emitted EmitSequence(const std::vector<RegexNode>& children) const {
    std::vector<Emitted> parts;
    std::string pending_literal;
    int pending_length = 0;  // code points in pending_literal
    auto flush = [&]() {
      // A literal of several code points is parenthesized before a quantifier, for clarity.
      if (pending_length > 0) parts.push_back({GbnfLiteral(pending_literal), pending_length == 1});
      pending_literal.clear();
      pending_length = 0;
    };
    for (const RegexNode& child : children) {
      const std::optional<char32_t> single =
          child.kind == RegexNode::Kind::kCodePoints ? child.code_points.Single() : std::nullopt;
      if (single && HasOneSpelling(*single)) {
        AppendSpelling(*single, &pending_literal);
        ++pending_length;
        continue;
      }
      flush();
      parts.push_back(Emit(child));
    }
    flush();
    if (parts.empty()) return {"\"\"", true};
    if (parts.size() == 1) return parts[0];
    std::string text;
    for (const Emitted& part : parts) {
      if (!text.empty()) text += ' ';
      text += part.text;
    }
    return {text, false};
  }

  Emitted EmitRepeat(const RegexNode& node) const {
    const Emitted child = Emit(node.children[0]);
    const int min_count = node.min_count;
    const int max_count = node.max_count;
    if (max_count == 0) return {"\"\"", true};
    if (min_count == 1 && max_count == 1) return child;
    // A quantified expression takes parentheses before another quantifier.
    const std::string base = Parenthesized(child);
    if (max_count == RegexNode::kUnbounded) {
      if (min_count == 0) return {base + "*", false};
      if (min_count == 1) return {base + "+", false};
      return {base + "{" + std::to_string(min_count) + ",}", false};
    }
    if (min_count == 0 && max_count == 1) return {base + "?", false};
    if (min_count == max_count) return {base + "{" + std::to_string(min_count) + "}", false};
    return {base + "{" + std::to_string(min_count) + "," + std::to_string(max_count) + "}", false};
  }

  RegexTextForm form_;
};

}  // namespace

Expected<std::string> RegexToGbnfExpression(std::string_view pattern, RegexTextForm form) {
  auto tree = ParseRegex(pattern);
  if (!tree) return Error{tree.error()};
  const RegexEmitter emitter(form);
  if (emitter.ExpandedSize(*tree) > kMaxRegexExpandedElements) {
    return Error{"regex: the pattern expands to more than " +
                 std::to_string(kMaxRegexExpandedElements) +
                 " grammar elements once its counted repetitions are unrolled"};
  }
  return emitter.Emit(*tree).text;
}

Expected<std::string> RegexToGbnf(std::string_view pattern) {
  auto expression = RegexToGbnfExpression(pattern, RegexTextForm::kRaw);
  if (!expression) return expression;
  return "root ::= " + *expression + "\n";
}

}  // namespace vllm
