// The WordPiece model: greedy longest-match-first pieces, non-initial ones looked up with the
// continuing_subword_prefix ("##"); a piece that cannot be covered, or is longer than
// max_input_chars_per_word characters, is the unknown token.
#pragma once

#include <string>

#include "tokenizer/hf/model.h"

namespace vllm::hf {

class WordPieceModel : public Model {
 public:
  static Expected<std::unique_ptr<Model>> Parse(const Json& json, std::string_view context);

  void Tokenize(std::string_view piece, std::vector<int32_t>* ids) const override;

 private:
  explicit WordPieceModel(Vocab vocab) : Model(std::move(vocab)) {}

  int32_t unk_id_ = -1;
  std::string prefix_;
  size_t max_chars_ = 100;
  size_t max_token_bytes_ = 0;  // the longest token: no longer lookup can match
};

}  // namespace vllm::hf
