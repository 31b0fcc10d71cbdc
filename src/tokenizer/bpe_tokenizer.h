// Byte-level BPE (GPT-2 family, llama.cpp's "gpt2" vocabularies): text is split by the
// pre-tokenizer regexes that tokenizer.ggml.pre names, each piece is written in the byte-level
// alphabet, and adjacent symbols are merged by merge rank, lowest first.
#pragma once

#include <string>
#include <unordered_map>

#include "tokenizer/pre_tokenizer_config.h"
#include "tokenizer/regex_splitter.h"
#include "tokenizer/vocab_tokenizer.h"

namespace vllm {

class BpeTokenizer : public VocabTokenizer {
 public:
  static Expected<std::unique_ptr<Tokenizer>> Create(GgufVocab vocab);

  std::string Decode(std::span<const int32_t> ids, bool skip_special_tokens) const override;
  bool IsSpecial(int32_t id) const override;

 private:
  BpeTokenizer(GgufVocab vocab, const PreTokenizerConfig& config, RegexSplitter splitter);
  // Pre-tokenizes the run, then EncodeWord on each piece.
  void EncodeFragment(std::string_view text, bool after_special,
                      std::vector<int32_t>* ids) const override;
  // Appends the ids of one pre-tokenized piece (raw bytes).
  void EncodeWord(std::string_view word, std::vector<int32_t>* ids) const;

  RegexSplitter pre_tokenizer_;
  bool ignore_merges_;  // a word that is a vocabulary token is emitted whole
  std::unordered_map<std::string, int32_t> merge_ranks_;  // "left right" → rank
};

}  // namespace vllm
