// Literal alternatives as a trie of GBNF rules.
//
//   {"red", "rose", "blue"}:   root   ::= ("blue" | "r" trie-1)
//                              trie-1 ::= "ed" | "ose"
#include "structured_output/literal_alternatives.h"

#include <algorithm>

#include "structured_output/compile_deadline.h"
#include "structured_output/gbnf_text.h"

namespace vllm {
namespace {

// Beyond this many nested branches the rest of a group is written flat, which bounds the
// recursion (strings that are each a prefix of the next would otherwise nest once per string).
constexpr int kMaxTrieDepth = 256;

std::string Utf8(const std::u32string& text) {
  std::string utf8;
  for (const char32_t code_point : text) AppendUtf8(code_point, &utf8);
  return utf8;
}

class TrieWriter {
 public:
  TrieWriter(const std::vector<std::u32string>& sorted,
             const std::function<std::string()>& new_rule_name,
             std::vector<std::pair<std::string, std::string>>* rules)
      : sorted_(sorted), new_rule_name_(new_rule_name), rules_(rules) {}

  // The strings sorted_[begin, end), which share their first `offset` code points, from there.
  std::string Write(size_t begin, size_t end, size_t offset, int depth) {
    if (CompileInterrupted()) return "\"\"";  // the compiler discards the result
    const std::u32string& first = sorted_[begin];
    if (end - begin == 1) return GbnfLiteral(Utf8(first.substr(offset)));
    if (depth > kMaxTrieDepth) {
      std::vector<std::string> flat;
      for (size_t i = begin; i < end; ++i)
        flat.push_back(GbnfLiteral(Utf8(sorted_[i].substr(offset))));
      return "(" + JoinGbnfAlternatives(flat) + ")";
    }
    // Sorted, so the common prefix of the range is that of its first and last strings.
    const std::u32string& last = sorted_[end - 1];
    size_t common = offset;
    while (common < first.size() && common < last.size() && first[common] == last[common]) {
      ++common;
    }
    std::vector<std::string> alternatives;
    size_t group_begin = begin;
    if (first.size() == common) {  // one string ends here (the shortest sorts first)
      alternatives.push_back("\"\"");
      ++group_begin;
    }
    while (group_begin < end) {
      size_t group_end = group_begin + 1;
      while (group_end < end && sorted_[group_end][common] == sorted_[group_begin][common]) {
        ++group_end;
      }
      alternatives.push_back(Write(group_begin, group_end, common, depth + 1));
      group_begin = group_end;
    }
    const std::string branch = new_rule_name_();
    rules_->emplace_back(branch, JoinGbnfAlternatives(alternatives));
    if (common == offset) return branch;
    return GbnfLiteral(Utf8(first.substr(offset, common - offset))) + " " + branch;
  }

 private:
  const std::vector<std::u32string>& sorted_;
  const std::function<std::string()>& new_rule_name_;
  std::vector<std::pair<std::string, std::string>>* rules_;
};

}  // namespace

std::string LiteralAlternatives(std::vector<std::string> texts,
                                const std::function<std::string()>& new_rule_name,
                                std::vector<std::pair<std::string, std::string>>* rules) {
  std::sort(texts.begin(), texts.end());
  texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
  if (texts.size() <= kMaxFlatLiteralAlternatives) {
    std::vector<std::string> literals;
    for (const std::string& text : texts) literals.push_back(GbnfLiteral(text));
    return literals.size() == 1 ? literals[0] : "(" + JoinGbnfAlternatives(literals) + ")";
  }
  std::vector<std::u32string> sorted;
  for (const std::string& text : texts) sorted.push_back(DecodeUtf8(text).value_or(U""));
  std::sort(sorted.begin(), sorted.end());
  return TrieWriter(sorted, new_rule_name, rules).Write(0, sorted.size(), 0, 0);
}

}  // namespace vllm
