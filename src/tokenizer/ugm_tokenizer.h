// Unigram (SentencePiece) tokenization of llama.cpp's "t5" vocabularies (T5, XLM-RoBERTa: bge-m3,
// multilingual-e5), as llama.cpp's UGM tokenizer runs it: SentencePiece's normalization (the
// precompiled charsmap, whitespace runs collapsed when remove_extra_whitespaces, a ▁ in front
// with add_space_prefix, spaces written as ▁), then the best-scoring split into pieces. Runs of
// unknown characters become one unknown token. Departures from llama.cpp, to agree with
// SentencePiece: the runs become their bytes when the vocabulary has <0xXX> tokens
// (byte_fallback); the space prefix goes in front of the whole text when whitespace is kept
// (" " is ▁▁), and without add_space_prefix the first word gets no ▁ even when whitespace runs
// collapse. Decoding is SentencePiece's (SpmTokenizer's).
#pragma once

#include "tokenizer/precompiled_charsmap.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/unigram_segmenter.h"

namespace vllm {

class UgmTokenizer : public SpmTokenizer {
 public:
  // An Error when the vocabulary's charsmap is malformed.
  static Expected<std::unique_ptr<Tokenizer>> Create(GgufVocab vocab);

 private:
  UgmTokenizer(GgufVocab vocab, PrecompiledCharsmap charsmap);
  // SentencePiece's normalization of one run of text (no special tokens in it).
  std::string Normalize(std::string_view text) const;
  // Normalize, then the segmenter's pieces (unknown ones as byte tokens, else [UNK]).
  void EncodeFragment(std::string_view text, bool after_special,
                      std::vector<int32_t>* ids) const override;

  PrecompiledCharsmap charsmap_;
  UnigramSegmenter segmenter_;
};

}  // namespace vllm
