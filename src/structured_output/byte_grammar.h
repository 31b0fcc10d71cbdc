// The grammar as the matcher runs it: one flat array of byte-level elements, where every
// character element of the IR became UTF-8 byte-range sequences, and the byte classes (bytes that
// no element of the grammar tells apart).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "common/expected.h"
#include "structured_output/grammar.h"

namespace vllm {

struct ByteGrammarElement {
  enum class Kind : uint8_t {
    kByteRange,  // one byte in [first_byte, last_byte]
    kRuleRef,    // the rule rule_id
    kEnd,        // the end of an alternative
  };
  Kind kind = Kind::kEnd;
  uint8_t first_byte = 0;
  uint8_t last_byte = 0;
  int32_t rule_id = -1;
};

struct ByteGrammar {
  // Every alternative of every rule, each followed by a kEnd element. A position in the grammar
  // is an index into this array.
  std::vector<ByteGrammarElement> elements;
  // Rule r's alternatives start at elements[alternative_starts[i]] for i in
  // [rule_alternatives_begin[r], rule_alternatives_begin[r + 1]).
  std::vector<int32_t> alternative_starts;
  std::vector<int32_t> rule_alternatives_begin;  // [num_rules + 1]
  int32_t root_rule_id = -1;
  // byte -> its class; bytes of one class are in exactly the same byte ranges.
  std::array<uint8_t, 256> byte_class{};
  int32_t num_byte_classes = 0;

  std::span<const int32_t> alternatives(int32_t rule_id) const {
    return std::span<const int32_t>(alternative_starts)
        .subspan(rule_alternatives_begin[rule_id],
                 rule_alternatives_begin[rule_id + 1] - rule_alternatives_begin[rule_id]);
  }
};

// Lowers the IR to bytes; an error when the result has more than limits.max_grammar_elements.
Expected<ByteGrammar> LowerToBytes(const Grammar& grammar, const GrammarLimits& limits);

}  // namespace vllm
