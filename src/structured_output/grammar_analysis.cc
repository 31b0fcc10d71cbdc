// Left recursion check. The matcher expands a rule reference by pushing a return position unless
// the reference ends its alternative (a tail call). Expanding without consuming input follows the
// "leftmost" references: those preceded only by nullable elements. A cycle of leftmost references
// that pushes somewhere would grow the stack forever, so it is refused; a cycle of tail calls
// (`s ::= x s | ""` with a nullable x) revisits the same stack and is fine.
#include "structured_output/grammar_analysis.h"

#include <algorithm>
#include <vector>

namespace vllm {
namespace {

struct LeftmostEdge {
  int32_t to_rule_id;
  bool pushes;  // the reference is not the last element of its alternative
};

// Rules that can match the empty string: a worklist over "elements not yet known nullable" per
// alternative, linear in the grammar size.
std::vector<bool> NullableRules(const Grammar& grammar) {
  const size_t num_rules = grammar.rules.size();
  std::vector<bool> nullable(num_rules, false);
  std::vector<int32_t> alternative_rule;              // [num_alternatives]
  std::vector<size_t> num_unknown_elements;           // [num_alternatives]
  std::vector<std::vector<int32_t>> uses(num_rules);  // rule -> alternatives, once per reference
  std::vector<int32_t> worklist;
  for (size_t rule_id = 0; rule_id < num_rules; ++rule_id) {
    for (const GrammarSequence& sequence : grammar.rules[rule_id].alternatives) {
      const int32_t alternative_id = static_cast<int32_t>(alternative_rule.size());
      alternative_rule.push_back(static_cast<int32_t>(rule_id));
      num_unknown_elements.push_back(sequence.size());
      for (const GrammarElement& element : sequence) {
        if (element.kind == GrammarElement::Kind::kRuleRef) {
          uses[element.rule_id].push_back(alternative_id);
        }
      }
      if (sequence.empty() && !nullable[rule_id]) {
        nullable[rule_id] = true;
        worklist.push_back(static_cast<int32_t>(rule_id));
      }
    }
  }
  while (!worklist.empty()) {
    const int32_t rule_id = worklist.back();
    worklist.pop_back();
    for (int32_t alternative_id : uses[rule_id]) {
      if (--num_unknown_elements[alternative_id] != 0) continue;
      const int32_t user_id = alternative_rule[alternative_id];
      if (!nullable[user_id]) {
        nullable[user_id] = true;
        worklist.push_back(user_id);
      }
    }
  }
  return nullable;
}

// Strongly connected components of the leftmost-reference graph (iterative Tarjan).
std::vector<int32_t> StronglyConnectedComponents(
    const std::vector<std::vector<LeftmostEdge>>& edges) {
  const int32_t num_rules = static_cast<int32_t>(edges.size());
  std::vector<int32_t> component(num_rules, -1);
  std::vector<int32_t> index(num_rules, -1);
  std::vector<int32_t> low_link(num_rules, 0);
  std::vector<bool> on_stack(num_rules, false);
  std::vector<int32_t> stack;
  struct Frame {
    int32_t rule_id;
    size_t next_edge;
  };
  std::vector<Frame> frames;
  int32_t next_index = 0;
  int32_t num_components = 0;
  for (int32_t start = 0; start < num_rules; ++start) {
    if (index[start] >= 0) continue;
    frames.push_back({start, 0});
    index[start] = low_link[start] = next_index++;
    stack.push_back(start);
    on_stack[start] = true;
    while (!frames.empty()) {
      Frame& frame = frames.back();
      const int32_t rule_id = frame.rule_id;
      if (frame.next_edge < edges[rule_id].size()) {
        const int32_t to = edges[rule_id][frame.next_edge++].to_rule_id;
        if (index[to] < 0) {
          index[to] = low_link[to] = next_index++;
          stack.push_back(to);
          on_stack[to] = true;
          frames.push_back({to, 0});
        } else if (on_stack[to]) {
          low_link[rule_id] = std::min(low_link[rule_id], index[to]);
        }
        continue;
      }
      if (low_link[rule_id] == index[rule_id]) {
        int32_t member;
        do {
          member = stack.back();
          stack.pop_back();
          on_stack[member] = false;
          component[member] = num_components;
        } while (member != rule_id);
        ++num_components;
      }
      frames.pop_back();
      if (!frames.empty()) {
        const int32_t caller = frames.back().rule_id;
        low_link[caller] = std::min(low_link[caller], low_link[rule_id]);
      }
    }
  }
  return component;
}

}  // namespace

Status CheckNoLeftRecursion(const Grammar& grammar) {
  const std::vector<bool> nullable = NullableRules(grammar);
  std::vector<std::vector<LeftmostEdge>> edges(grammar.rules.size());
  for (size_t rule_id = 0; rule_id < grammar.rules.size(); ++rule_id) {
    for (const GrammarSequence& sequence : grammar.rules[rule_id].alternatives) {
      for (size_t i = 0; i < sequence.size(); ++i) {
        const GrammarElement& element = sequence[i];
        if (element.kind != GrammarElement::Kind::kRuleRef) break;
        edges[rule_id].push_back({element.rule_id, i + 1 < sequence.size()});
        if (!nullable[element.rule_id]) break;
      }
    }
  }
  const std::vector<int32_t> component = StronglyConnectedComponents(edges);
  for (size_t rule_id = 0; rule_id < grammar.rules.size(); ++rule_id) {
    for (const LeftmostEdge& edge : edges[rule_id]) {
      if (edge.pushes && component[edge.to_rule_id] == component[rule_id]) {
        return Error{"left recursion in rule `" +
                     grammar.UserRuleName(static_cast<int32_t>(rule_id)) + "`"};
      }
    }
  }
  return Status::Ok();
}

}  // namespace vllm
