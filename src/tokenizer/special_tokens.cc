#include "tokenizer/special_tokens.h"

#include <algorithm>

namespace vllm {

SpecialTokenSplitter::SpecialTokenSplitter(const GgufVocab& vocab) {
  for (int32_t id = 0; id < static_cast<int32_t>(vocab.tokens.size()); ++id) {
    TokenType type = vocab.types[id];
    if ((type == TokenType::kControl || type == TokenType::kUserDefined ||
         type == TokenType::kUnknown) &&
        !vocab.tokens[id].empty()) {
      specials_.emplace_back(vocab.tokens[id], id);
    }
  }
  // Longer tokens first, so "<|eot_id|>" wins over any special token that prefixes it.
  std::stable_sort(specials_.begin(), specials_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

std::vector<TextFragment> SpecialTokenSplitter::Split(std::string_view text) const {
  if (text.empty()) return {};
  std::vector<TextFragment> fragments = {{-1, text}};
  for (const auto& [special, id] : specials_) {
    std::vector<TextFragment> next;
    for (const TextFragment& fragment : fragments) {
      if (fragment.token_id >= 0) {
        next.push_back(fragment);
        continue;
      }
      std::string_view rest = fragment.text;
      size_t found;
      while ((found = rest.find(special)) != std::string_view::npos) {
        if (found > 0) next.push_back({-1, rest.substr(0, found)});
        next.push_back({id, {}});
        rest.remove_prefix(found + special.size());
      }
      if (!rest.empty()) next.push_back({-1, rest});
    }
    fragments = std::move(next);
  }
  return fragments;
}

}  // namespace vllm
