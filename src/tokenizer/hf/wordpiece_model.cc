#include "tokenizer/hf/wordpiece_model.h"

#include <algorithm>

#include "common/utf8.h"
#include "tokenizer/wordpiece_match.h"

namespace vllm::hf {

Expected<std::unique_ptr<Model>> WordPieceModel::Parse(const Json& json, std::string_view context) {
  auto vocab = Vocab::ParseField(json, context);
  if (!vocab) return Error{vocab.error()};
  std::unique_ptr<WordPieceModel> model(new WordPieceModel(std::move(*vocab)));
  auto unk_token = StringField(json, "unk_token", context, "[UNK]");
  if (!unk_token) return Error{unk_token.error()};
  auto unk_id = model->vocab_.Find(*unk_token);
  if (!unk_id) {
    return Error{FieldName(context, "unk_token") + ": '" + *unk_token +
                 "' is not in the vocabulary"};
  }
  model->unk_id_ = *unk_id;
  auto prefix = StringField(json, "continuing_subword_prefix", context, "##");
  if (!prefix) return Error{prefix.error()};
  model->prefix_ = std::move(*prefix);
  auto max_chars = IntField(json, "max_input_chars_per_word", context, 100);
  if (!max_chars) return Error{max_chars.error()};
  if (*max_chars < 0) return Error{FieldName(context, "max_input_chars_per_word") + ": negative"};
  model->max_chars_ = static_cast<size_t>(*max_chars);
  for (int32_t id = 0; id < model->vocab_.size(); ++id) {
    model->max_token_bytes_ = std::max(model->max_token_bytes_, model->vocab_.Token(id).size());
  }
  return std::unique_ptr<Model>(std::move(model));
}

void WordPieceModel::Tokenize(std::string_view piece, std::vector<int32_t>* ids) const {
  if (SplitUtf8Characters(piece).size() > max_chars_) {
    ids->push_back(unk_id_);
    return;
  }
  auto find = [this](const std::string& lookup) { return vocab_.Find(lookup); };
  if (!AppendWordPieces(piece, prefix_, max_token_bytes_, find, ids)) ids->push_back(unk_id_);
}

}  // namespace vllm::hf
