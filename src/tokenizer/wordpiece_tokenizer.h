// WordPiece (BERT, llama.cpp's "bert" vocabularies): BERT's basic pre-tokenization (NFD with
// accents stripped, lowercase, control characters dropped, punctuation and CJK characters as
// words of their own), then greedy longest-match-first pieces. The GGUF vocabulary writes a
// word-initial piece with a leading ▁ where Hugging Face's continuation pieces carry "##".
#pragma once

#include <string>
#include <vector>

#include "tokenizer/vocab_tokenizer.h"

namespace vllm {

class WordPieceTokenizer : public VocabTokenizer {
 public:
  explicit WordPieceTokenizer(GgufVocab vocab);

  std::string Decode(std::span<const int32_t> ids, bool skip_special_tokens) const override;
  bool IsSpecial(int32_t id) const override;

 private:
  // BERT's basic words, then EncodeWord on each.
  void EncodeFragment(std::string_view text, bool after_special,
                      std::vector<int32_t>* ids) const override;
  void EncodeWord(const std::string& word, std::vector<int32_t>* ids) const;

  size_t max_token_bytes_ = 0;
};

// BERT's basic tokenization of `text` into lowercase, accent-free words.
std::vector<std::string> BertBasicWords(std::string_view text);

}  // namespace vllm
