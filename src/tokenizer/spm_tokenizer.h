// SentencePiece BPE as llama.cpp's "llama" vocabularies use it: characters merged pairwise by
// the highest-scoring vocabulary entry, unknown pieces spelled as <0xXX> byte tokens, spaces
// written as U+2581 (▁) with one added in front of the text.
#pragma once

#include "tokenizer/vocab_tokenizer.h"

namespace vllm {

class SpmTokenizer : public VocabTokenizer {
 public:
  explicit SpmTokenizer(GgufVocab vocab);

  std::string Decode(std::span<const int32_t> ids, bool skip_special_tokens) const override;
  bool IsSpecial(int32_t id) const override;

 protected:
  // add_bos / add_eos: the model's defaults, used where the file has no flag.
  SpmTokenizer(GgufVocab vocab, bool add_bos, bool add_eos);

  // The space prefix (add_space_prefix, after a special token), spaces as ▁, then EncodeText.
  void EncodeFragment(std::string_view text, bool after_special,
                      std::vector<int32_t>* ids) const override;

  int32_t byte_token_ids_[256];  // <0xXX> → id, -1 when missing

 private:
  // Appends the ids of one run of ordinary text (spaces already written as ▁).
  void EncodeText(std::string_view text, std::vector<int32_t>* ids) const;
  // Appends `piece`'s id, or its bytes as <0xXX> tokens when the vocabulary lacks it.
  void EmitPiece(std::string_view piece, std::vector<int32_t>* ids) const;
};

}  // namespace vllm
