// What every GGUF-vocabulary tokenizer shares: the vocabulary, its special-token splitter,
// Encode's frame around the special tokens, and the accessors of the Tokenizer interface that
// only read the vocabulary.
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
  // [BOS], the text split around the vocabulary's special tokens (each one its id, the text
  // between given to EncodeFragment), then [SEP] and [EOS], as add_sep_ and add_eos_ say.
  std::vector<int32_t> Encode(std::string_view text, bool add_special_tokens) const override;
  std::string_view TokenToPiece(int32_t id) const override {
    return id >= 0 && id < vocab_size() ? std::string_view(vocab_.tokens[id]) : std::string_view();
  }
  // llama.cpp's rerank layout: BERT vocabularies give [CLS] A [SEP] B [SEP] (segments 0 then 1);
  // the others [BOS] A [EOS] [SEP] B [EOS] (segment 0 throughout), each special token present
  // as the vocabulary's add-BOS / add-EOS / add-SEP flags say, SEP standing in for a missing EOS.
  EncodedPair EncodePair(std::string_view first, std::string_view second) const override;

 protected:
  // add_bos / add_eos: the model's defaults, used where the file has no flag.
  VocabTokenizer(GgufVocab vocab, bool add_bos, bool add_eos)
      : vocab_(std::move(vocab)),
        special_splitter_(vocab_),
        add_bos_(vocab_.add_bos.value_or(add_bos) && vocab_.bos_id >= 0),
        add_eos_(vocab_.add_eos.value_or(add_eos) && vocab_.eos_id >= 0) {}

  // Appends the ids of one run of text that holds no special token. `after_special`: the run
  // starts the text or follows a special token (where SentencePiece adds its space prefix; after
  // a special token only with vocab_.space_prefix_after_special).
  virtual void EncodeFragment(std::string_view text, bool after_special,
                              std::vector<int32_t>* ids) const = 0;

  GgufVocab vocab_;
  SpecialTokenSplitter special_splitter_;
  bool add_bos_;          // Encode with add_special_tokens starts with BOS
  bool add_eos_;          // Encode with add_special_tokens ends with EOS
  bool add_sep_ = false;  // Encode with add_special_tokens ends with [SEP] (before any EOS)
};

}  // namespace vllm
