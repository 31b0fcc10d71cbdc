// Lowering of the code point IR to bytes. A character element becomes its UTF-8 byte ranges
// inline when it is one byte-range sequence (a literal character, an ASCII range), and otherwise
// a reference to a helper rule whose alternatives are the sequences with common leading byte
// ranges factored out (so a class of many scattered characters stays a few parse stacks wide).
#include "structured_output/byte_grammar.h"

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "structured_output/compile_deadline.h"
#include "structured_output/utf8_ranges.h"

namespace vllm {
namespace {

using Element = ByteGrammarElement;

Element ByteRangeElement(ByteRange range) {
  return Element{
      .kind = Element::Kind::kByteRange, .first_byte = range.first, .last_byte = range.last};
}

Element RuleRefElement(int32_t rule_id) {
  return Element{.kind = Element::Kind::kRuleRef, .rule_id = rule_id};
}

// The sequences of one character class as a trie over byte ranges.
struct RangeTrieNode {
  std::vector<std::pair<ByteRange, std::unique_ptr<RangeTrieNode>>> children;
  bool is_end = false;
};

class ByteGrammarBuilder {
 public:
  ByteGrammarBuilder(const Grammar& grammar, const GrammarLimits& limits)
      : grammar_(grammar), limits_(limits), rule_alternatives_(grammar.rules.size()) {}

  Expected<ByteGrammar> Build() {
    for (size_t rule_id = 0; rule_id < grammar_.rules.size(); ++rule_id) {
      for (const GrammarSequence& sequence : grammar_.rules[rule_id].alternatives) {
        std::vector<Element> lowered;
        for (const GrammarElement& element : sequence) {
          if (element.kind == GrammarElement::Kind::kRuleRef) {
            lowered.push_back(RuleRefElement(element.rule_id));
          } else {
            LowerCharacter(grammar_.ranges(element), &lowered);
          }
        }
        AddAlternative(static_cast<int32_t>(rule_id), lowered);
        if (CompileInterrupted()) return Error{"compile interrupted"};
        if (byte_grammar_.elements.size() > limits_.max_grammar_elements) {
          return Error{"grammar too large: more than " +
                       std::to_string(limits_.max_grammar_elements) +
                       " elements once its characters are lowered to UTF-8 bytes"};
        }
      }
    }
    byte_grammar_.rule_alternatives_begin.push_back(0);
    for (const std::vector<int32_t>& starts : rule_alternatives_) {
      byte_grammar_.alternative_starts.insert(byte_grammar_.alternative_starts.end(),
                                              starts.begin(), starts.end());
      byte_grammar_.rule_alternatives_begin.push_back(
          static_cast<int32_t>(byte_grammar_.alternative_starts.size()));
    }
    byte_grammar_.root_rule_id = grammar_.root_rule_id;
    ComputeByteClasses();
    return std::move(byte_grammar_);
  }

 private:
  void AddAlternative(int32_t rule_id, const std::vector<Element>& lowered) {
    rule_alternatives_[rule_id].push_back(static_cast<int32_t>(byte_grammar_.elements.size()));
    byte_grammar_.elements.insert(byte_grammar_.elements.end(), lowered.begin(), lowered.end());
    byte_grammar_.elements.push_back(Element{});  // kEnd
  }

  int32_t AddRule() {
    rule_alternatives_.emplace_back();
    return static_cast<int32_t>(rule_alternatives_.size()) - 1;
  }

  void LowerCharacter(std::span<const UnicodeRange> ranges, std::vector<Element>* lowered) {
    std::vector<Utf8RangeSequence> sequences = SplitIntoUtf8Sequences(ranges);
    if (sequences.size() == 1) {
      for (int32_t i = 0; i < sequences[0].length; ++i) {
        lowered->push_back(ByteRangeElement(sequences[0].bytes[i]));
      }
      return;
    }
    // Zero sequences (an empty class) make a rule without alternatives, which matches nothing.
    std::vector<uint32_t> key;
    for (const UnicodeRange& range : ranges) {
      key.push_back(range.first);
      key.push_back(range.last);
    }
    auto [it, inserted] = class_rules_.emplace(std::move(key), -1);
    if (inserted) {
      RangeTrieNode trie;
      for (const Utf8RangeSequence& sequence : sequences) {
        RangeTrieNode* node = &trie;
        for (int32_t i = 0; i < sequence.length; ++i) {
          RangeTrieNode* child = nullptr;
          for (auto& [range, existing] : node->children) {
            if (range == sequence.bytes[i]) child = existing.get();
          }
          if (child == nullptr) {
            node->children.emplace_back(sequence.bytes[i], std::make_unique<RangeTrieNode>());
            child = node->children.back().second.get();
          }
          node = child;
        }
        node->is_end = true;
      }
      it->second = AddTrieRule(trie);
    }
    lowered->push_back(RuleRefElement(it->second));
  }

  // A rule with one alternative per child of `node` (and an empty one if `node` ends a
  // sequence); chains of single children stay inline. Recursion depth: at most 4 bytes.
  int32_t AddTrieRule(const RangeTrieNode& node) {
    const int32_t rule_id = AddRule();
    if (node.is_end) AddAlternative(rule_id, {});
    for (const auto& [range, child] : node.children) {
      std::vector<Element> lowered = {ByteRangeElement(range)};
      const RangeTrieNode* tail = child.get();
      while (tail->children.size() == 1 && !tail->is_end) {
        lowered.push_back(ByteRangeElement(tail->children[0].first));
        tail = tail->children[0].second.get();
      }
      if (!tail->children.empty()) lowered.push_back(RuleRefElement(AddTrieRule(*tail)));
      AddAlternative(rule_id, lowered);
    }
    return rule_id;
  }

  void ComputeByteClasses() {
    std::array<bool, 257> starts_class{};
    starts_class[0] = true;
    for (const Element& element : byte_grammar_.elements) {
      if (element.kind != Element::Kind::kByteRange) continue;
      starts_class[element.first_byte] = true;
      starts_class[element.last_byte + 1] = true;
    }
    int32_t class_id = -1;
    for (int byte = 0; byte < 256; ++byte) {
      if (starts_class[byte]) ++class_id;
      byte_grammar_.byte_class[byte] = static_cast<uint8_t>(class_id);
    }
    byte_grammar_.num_byte_classes = class_id + 1;
  }

  const Grammar& grammar_;
  const GrammarLimits& limits_;
  ByteGrammar byte_grammar_;
  std::vector<std::vector<int32_t>> rule_alternatives_;   // [num_rules]: alternative starts
  std::map<std::vector<uint32_t>, int32_t> class_rules_;  // class ranges -> helper rule
};

}  // namespace

Expected<ByteGrammar> LowerToBytes(const Grammar& grammar, const GrammarLimits& limits) {
  return ByteGrammarBuilder(grammar, limits).Build();
}

}  // namespace vllm
