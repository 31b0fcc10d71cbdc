#include "tokenizer/hf/wordpiece_model.h"

#include "tokenizer/utf8.h"

namespace vllm::hf {

Expected<std::unique_ptr<Model>> WordPieceModel::Parse(const Json& json, std::string_view context) {
  const Json* vocab_json = FindField(json, "vocab");
  if (vocab_json == nullptr) return Error{FieldName(context, "vocab") + ": missing"};
  auto vocab = Vocab::Parse(*vocab_json, FieldName(context, "vocab"));
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
  return std::unique_ptr<Model>(std::move(model));
}

void WordPieceModel::Tokenize(std::string_view piece, std::vector<int32_t>* ids) const {
  const std::vector<std::string_view> chars = SplitUtf8Characters(piece);
  if (chars.size() > max_chars_) {
    ids->push_back(unk_id_);
    return;
  }
  const size_t first_id = ids->size();
  std::string candidate;
  // Sub-pieces start and end at character boundaries: chars[start, end).
  for (size_t start = 0; start < chars.size();) {
    size_t end = chars.size();
    for (; end > start; --end) {
      const size_t begin_byte = chars[start].data() - piece.data();
      const size_t end_byte = chars[end - 1].data() + chars[end - 1].size() - piece.data();
      candidate.assign(start > 0 ? prefix_ : "");
      candidate.append(piece.substr(begin_byte, end_byte - begin_byte));
      if (auto id = vocab_.Find(candidate)) {
        ids->push_back(*id);
        break;
      }
    }
    if (end == start) {  // nothing fits: the whole piece is unknown
      ids->resize(first_id);
      ids->push_back(unk_id_);
      return;
    }
    start = end;
  }
}

}  // namespace vllm::hf
