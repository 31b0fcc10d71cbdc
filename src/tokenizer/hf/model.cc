#include "tokenizer/hf/model.h"

#include "tokenizer/hf/bpe_model.h"
#include "tokenizer/hf/unigram_model.h"
#include "tokenizer/hf/wordpiece_model.h"

namespace vllm::hf {
namespace {

// Each piece is one token, or the unknown token.
class WordLevelModel : public Model {
 public:
  WordLevelModel(Vocab vocab, int32_t unk_id) : Model(std::move(vocab)), unk_id_(unk_id) {}
  void Tokenize(std::string_view piece, std::vector<int32_t>* ids) const override {
    ids->push_back(vocab_.Find(piece).value_or(unk_id_));
  }

 private:
  int32_t unk_id_;
};

}  // namespace

Expected<std::optional<int32_t>> ParseUnkToken(const Json& json, const Vocab& vocab,
                                               std::string_view context) {
  auto unk_token = OptionalStringField(json, "unk_token", context);
  if (!unk_token) return Error{unk_token.error()};
  if (!*unk_token) return std::optional<int32_t>();
  auto id = vocab.Find(**unk_token);
  if (!id) {
    return Error{FieldName(context, "unk_token") + ": '" + **unk_token +
                 "' is not in the vocabulary"};
  }
  return std::optional<int32_t>(*id);
}

Expected<std::unique_ptr<Model>> ParseModel(const Json& json, std::string_view context) {
  if (!json.is_object()) return Error{std::string(context) + ": missing or not an object"};
  // BPE files written by old versions have no "type".
  auto type = StringField(json, "type", context, "BPE");
  if (!type) return Error{type.error()};
  if (*type == "BPE") return BpeModel::Parse(json, context);
  if (*type == "WordPiece") return WordPieceModel::Parse(json, context);
  if (*type == "Unigram") return UnigramModel::Parse(json, context);
  if (*type == "WordLevel") {
    auto vocab = Vocab::ParseField(json, context);
    if (!vocab) return Error{vocab.error()};
    auto unk_id = ParseUnkToken(json, *vocab, context);
    if (!unk_id) return Error{unk_id.error()};
    if (!*unk_id) return Error{FieldName(context, "unk_token") + ": missing"};
    return std::unique_ptr<Model>(new WordLevelModel(std::move(*vocab), **unk_id));
  }
  return Error{std::string(context) + ": unsupported model type '" + *type +
               "' (supported: BPE, WordPiece, WordLevel, Unigram)"};
}

}  // namespace vllm::hf
