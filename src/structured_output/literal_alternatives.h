// One of many literal strings as GBNF, factored into a trie of rules. A flat alternation of N
// literals keeps up to N parse stacks alive at once (the grammar engine bounds that number);
// the trie shares common prefixes, so the matcher follows one branch.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace vllm {

// Up to this many literals stay a flat alternation (readable, and cheap enough).
constexpr size_t kMaxFlatLiteralAlternatives = 16;

// A GBNF expression matching exactly one of `texts` (valid UTF-8; duplicates allowed). Helper
// rules are appended to `rules` as (name, body), each named by `new_rule_name()`.
std::string LiteralAlternatives(std::vector<std::string> texts,
                                const std::function<std::string()>& new_rule_name,
                                std::vector<std::pair<std::string, std::string>>* rules);

}  // namespace vllm
