// The grammar IR that GBNF text parses into: rules -> alternatives -> sequences of elements, each
// element a set of Unicode code point ranges (one character) or a reference to a rule. Quantifiers
// are already lowered into helper rules. Also the size limits that bound every grammar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace vllm {

struct GrammarLimits {
  size_t max_grammar_bytes = 8 << 20;        // GBNF text (an 80,000-item enum: 2 MiB)
  size_t max_grammar_elements = 1 << 20;     // after expanding {m,n} repetitions
  size_t max_repetition_count = 100000;      // m and n of {m,n}
  size_t max_parse_stacks = 1 << 12;         // live parse states per position (ambiguity bound)
  size_t max_cached_masks = 256;             // token masks a compiled grammar keeps (LRU)
  size_t max_parser_state_bytes = 16 << 20;  // a matcher's memoized parser states (soft bound)
};

// An inclusive range of Unicode scalar values (never surrogates).
struct UnicodeRange {
  uint32_t first = 0;
  uint32_t last = 0;
  bool operator==(const UnicodeRange&) const = default;
};

inline constexpr uint32_t kMaxUnicodeScalar = 0x10FFFF;

struct GrammarElement {
  enum class Kind : uint8_t {
    kCharacter,  // one character from the ranges Grammar::class_ranges[ranges_begin, +count)
    kRuleRef,    // the rule Grammar::rules[rule_id]
  };
  Kind kind = Kind::kCharacter;
  int32_t rule_id = -1;
  uint32_t ranges_begin = 0;
  uint32_t ranges_count = 0;  // 0: a character class that matches nothing
};

using GrammarSequence = std::vector<GrammarElement>;

struct GrammarRule {
  std::string name;  // helper rules: "<user rule>#<n>", which no GBNF rule name can be
  std::vector<GrammarSequence> alternatives;
  int32_t defined_by_rule_id = -1;  // helper rules: the user rule whose text produced it
  bool is_helper() const { return defined_by_rule_id >= 0; }
};

struct Grammar {
  std::vector<GrammarRule> rules;
  // The ranges of every character element, sorted, disjoint and non-adjacent per element.
  std::vector<UnicodeRange> class_ranges;
  int32_t root_rule_id = -1;

  std::span<const UnicodeRange> ranges(const GrammarElement& element) const {
    return std::span<const UnicodeRange>(class_ranges)
        .subspan(element.ranges_begin, element.ranges_count);
  }
  // The user rule to name in messages about `rule_id`.
  const std::string& UserRuleName(int32_t rule_id) const {
    const GrammarRule& rule = rules[rule_id];
    return rule.is_helper() ? rules[rule.defined_by_rule_id].name : rule.name;
  }
};

}  // namespace vllm
