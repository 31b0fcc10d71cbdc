// A tokenizer's vocabulary as the grammar engine sees it (the bytes each token appends, the stop
// tokens), and its byte-trie index used to compute token masks.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace vllm {

// What a grammar needs to know of a tokenizer's vocabulary.
struct TokenVocabulary {
  // [vocab_size]: the bytes token i appends to the output text (may be a partial UTF-8
  // character); empty for ids that a constraint never allows (special / control tokens, padding
  // rows of the model's logits).
  std::vector<std::string> token_bytes;
  // Ids that end generation (EOS, and generation_config's extra EOS ids): allowed exactly where
  // the output so far is a complete sentence of the grammar. Their bytes never count as text;
  // ids out of range are ignored.
  std::vector<int32_t> stop_token_ids;
};

// One node of the vocabulary's byte trie. Nodes are stored in depth-first preorder, so a node's
// subtree is the index range [its index + 1, subtree_end).
struct VocabularyTrieNode {
  int32_t subtree_end = 0;
  // The tokens whose bytes end at this node are trie_token_ids[tokens_begin, next node's
  // tokens_begin).
  int32_t tokens_begin = 0;
  int32_t depth = 0;  // bytes from the root: 1 for a token's first byte
  uint8_t byte = 0;
};

// The vocabulary indexed for mask computation (e.g. a byte trie / sorted order); built once per
// tokenizer and shared by every grammar compiled against it. Thread-safe to share (immutable).
class IndexedVocabulary {
 public:
  explicit IndexedVocabulary(TokenVocabulary vocabulary);

  int64_t vocab_size() const { return static_cast<int64_t>(token_bytes_.size()); }
  const std::string& token_bytes(int32_t token_id) const { return token_bytes_[token_id]; }
  bool is_stop_token(int32_t token_id) const { return is_stop_token_[token_id]; }
  const std::vector<int32_t>& stop_token_ids() const { return stop_token_ids_; }

  // The trie of every non-empty, non-stop token: nodes in preorder, without the root.
  std::span<const VocabularyTrieNode> trie_nodes() const { return trie_nodes_; }
  // The token ids ending at trie node i: [trie_nodes()[i].tokens_begin, TokensEnd(i)).
  int32_t TokensEnd(int32_t node_index) const;
  std::span<const int32_t> trie_token_ids() const { return trie_token_ids_; }
  int32_t max_token_length() const { return max_token_length_; }

 private:
  void BuildTrie();

  std::vector<std::string> token_bytes_;
  std::vector<int32_t> stop_token_ids_;  // valid ids only, sorted, unique
  std::vector<bool> is_stop_token_;      // [vocab_size]
  std::vector<VocabularyTrieNode> trie_nodes_;
  std::vector<int32_t> trie_token_ids_;
  int32_t max_token_length_ = 0;
};

std::shared_ptr<const IndexedVocabulary> IndexVocabulary(TokenVocabulary vocabulary);

// Words of a token bitmask covering `vocab_size` ids (bit i % 32 of word i / 32).
inline int64_t TokenBitmaskWords(int64_t vocab_size) { return (vocab_size + 31) / 32; }

}  // namespace vllm
