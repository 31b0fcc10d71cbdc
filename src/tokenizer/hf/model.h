// The model of tokenizer.json ("model"): turns one pre-tokenized piece into ids. Supported
// types: BPE, WordPiece, WordLevel, Unigram.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "tokenizer/hf/json_fields.h"
#include "tokenizer/hf/vocab.h"

namespace vllm::hf {

class Model {
 public:
  explicit Model(Vocab vocab) : vocab_(std::move(vocab)) {}
  virtual ~Model() = default;

  // Appends the ids of one piece (non-empty).
  virtual void Tokenize(std::string_view piece, std::vector<int32_t>* ids) const = 0;
  const Vocab& vocab() const { return vocab_; }

 protected:
  Vocab vocab_;
};

Expected<std::unique_ptr<Model>> ParseModel(const Json& json, std::string_view context = "model");

// The id of a model's unknown token: nullopt when `unk_token` is null, an Error when it is not
// in the vocabulary.
Expected<std::optional<int32_t>> ParseUnkToken(const Json& json, const Vocab& vocab,
                                               std::string_view context);

}  // namespace vllm::hf
