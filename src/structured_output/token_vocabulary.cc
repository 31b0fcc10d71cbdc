// The vocabulary index: a byte trie of the tokens, laid out in depth-first preorder by sorting
// the tokens' bytes, so a mask computation walks it as one array and skips pruned subtrees.
#include "structured_output/token_vocabulary.h"

#include <algorithm>
#include <utility>

namespace vllm {

IndexedVocabulary::IndexedVocabulary(TokenVocabulary vocabulary)
    : token_bytes_(std::move(vocabulary.token_bytes)), is_stop_token_(token_bytes_.size(), false) {
  for (int32_t token_id : vocabulary.stop_token_ids) {
    if (token_id < 0 || token_id >= vocab_size() || is_stop_token_[token_id]) continue;
    is_stop_token_[token_id] = true;
    stop_token_ids_.push_back(token_id);
  }
  std::sort(stop_token_ids_.begin(), stop_token_ids_.end());
  BuildTrie();
}

void IndexedVocabulary::BuildTrie() {
  std::vector<int32_t> sorted_ids;
  for (int32_t token_id = 0; token_id < vocab_size(); ++token_id) {
    if (!token_bytes_[token_id].empty() && !is_stop_token_[token_id]) {
      sorted_ids.push_back(token_id);
    }
  }
  std::stable_sort(sorted_ids.begin(), sorted_ids.end(),
                   [this](int32_t a, int32_t b) { return token_bytes_[a] < token_bytes_[b]; });
  // open_nodes[d]: the node at depth d + 1 on the path of the previous token.
  std::vector<int32_t> open_nodes;
  const std::string* previous = nullptr;
  for (int32_t token_id : sorted_ids) {
    const std::string& bytes = token_bytes_[token_id];
    size_t common = 0;
    if (previous != nullptr) {
      const size_t limit = std::min(previous->size(), bytes.size());
      while (common < limit && (*previous)[common] == bytes[common]) ++common;
    }
    // Close the previous token's nodes below the common prefix.
    while (open_nodes.size() > common) {
      trie_nodes_[open_nodes.back()].subtree_end = static_cast<int32_t>(trie_nodes_.size());
      open_nodes.pop_back();
    }
    for (size_t depth = common; depth < bytes.size(); ++depth) {
      open_nodes.push_back(static_cast<int32_t>(trie_nodes_.size()));
      trie_nodes_.push_back(
          VocabularyTrieNode{.subtree_end = 0,
                             .tokens_begin = static_cast<int32_t>(trie_token_ids_.size()),
                             .depth = static_cast<int32_t>(depth + 1),
                             .byte = static_cast<uint8_t>(bytes[depth])});
    }
    trie_token_ids_.push_back(token_id);
    max_token_length_ = std::max(max_token_length_, static_cast<int32_t>(bytes.size()));
    previous = &bytes;
  }
  while (!open_nodes.empty()) {
    trie_nodes_[open_nodes.back()].subtree_end = static_cast<int32_t>(trie_nodes_.size());
    open_nodes.pop_back();
  }
  trie_nodes_.shrink_to_fit();
}

int32_t IndexedVocabulary::TokensEnd(int32_t node_index) const {
  return node_index + 1 < static_cast<int32_t>(trie_nodes_.size())
             ? trie_nodes_[node_index + 1].tokens_begin
             : static_cast<int32_t>(trie_token_ids_.size());
}

std::shared_ptr<const IndexedVocabulary> IndexVocabulary(TokenVocabulary vocabulary) {
  return std::make_shared<const IndexedVocabulary>(std::move(vocabulary));
}

}  // namespace vllm
