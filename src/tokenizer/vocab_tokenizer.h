// What every GGUF-vocabulary tokenizer shares: the vocabulary, its special-token splitter, and
// the accessors of the Tokenizer interface that only read the vocabulary.
#pragma once

#include "tokenizer/gguf_vocab.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/tokenizer.h"

namespace vllm {

class VocabTokenizer : public Tokenizer {
 public:
  int64_t vocab_size() const override { return static_cast<int64_t>(vocab_.tokens.size()); }
  int32_t bos_id() const override { return vocab_.bos_id; }
  int32_t eos_id() const override { return vocab_.eos_id; }

 protected:
  explicit VocabTokenizer(GgufVocab vocab) : vocab_(std::move(vocab)), special_splitter_(vocab_) {}

  GgufVocab vocab_;
  SpecialTokenSplitter special_splitter_;
};

}  // namespace vllm
