#include "tokenizer/hf/unigram_model.h"

namespace vllm::hf {

Expected<std::unique_ptr<Model>> UnigramModel::Parse(const Json& json, std::string_view context) {
  const std::string vocab_context = FieldName(context, "vocab");
  const Json* vocab_json = FindField(json, "vocab");
  if (vocab_json == nullptr || !vocab_json->is_array()) {
    return Error{vocab_context + ": expected an array of [piece, score]"};
  }
  if (vocab_json->empty()) return Error{vocab_context + ": empty"};
  if (vocab_json->size() > static_cast<size_t>(kMaxTokenId) + 1) {
    return Error{vocab_context + ": more than " + std::to_string(kMaxTokenId + 1) + " pieces"};
  }
  std::vector<std::string> pieces;
  std::vector<double> scores;
  pieces.reserve(vocab_json->size());
  scores.reserve(vocab_json->size());
  for (size_t id = 0; id < vocab_json->size(); ++id) {
    const Json& entry = (*vocab_json)[id];
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number()) {
      return Error{vocab_context + "[" + std::to_string(id) + "]: expected [piece, score]"};
    }
    pieces.push_back(entry[0].get<std::string>());
    scores.push_back(entry[1].get<double>());
  }
  auto vocab = Vocab::FromTokens(pieces, vocab_context);
  if (!vocab) return Error{vocab.error()};
  UnigramSegmenter segmenter(pieces, scores, std::vector<bool>(pieces.size(), true));
  std::unique_ptr<UnigramModel> model(new UnigramModel(std::move(*vocab), std::move(segmenter)));
  if (FindField(json, "unk_id") != nullptr) {
    auto unk_id = IntField(json, "unk_id", context);
    if (!unk_id) return Error{unk_id.error()};
    if (*unk_id < 0 || *unk_id >= static_cast<int64_t>(pieces.size())) {
      return Error{FieldName(context, "unk_id") + ": " + std::to_string(*unk_id) +
                   " is outside the vocabulary"};
    }
    model->unk_id_ = static_cast<int32_t>(*unk_id);
  }
  auto byte_fallback = BoolField(json, "byte_fallback", context, false);
  if (!byte_fallback) return Error{byte_fallback.error()};
  model->byte_fallback_ = *byte_fallback;
  model->byte_ids_ = model->vocab_.ByteTokenIds();
  return std::unique_ptr<Model>(std::move(model));
}

void UnigramModel::EmitUnknown(std::string_view run, std::vector<int32_t>* ids) const {
  if (auto id = vocab_.Find(run)) {  // as Hugging Face looks the fused text up first
    ids->push_back(*id);
    return;
  }
  bool all_bytes = byte_fallback_;
  for (unsigned char byte : run) all_bytes = all_bytes && byte_ids_[byte] >= 0;
  if (all_bytes) {
    for (unsigned char byte : run) ids->push_back(byte_ids_[byte]);
  } else if (unk_id_) {
    ids->push_back(*unk_id_);
  }
  // Without an unknown token Hugging Face fails the whole encode; the run is dropped instead.
}

void UnigramModel::Tokenize(std::string_view piece, std::vector<int32_t>* ids) const {
  std::vector<UnigramSegmenter::Segment> segments;
  segmenter_.Split(piece, &segments);
  for (const UnigramSegmenter::Segment& segment : segments) {
    if (segment.id == UnigramSegmenter::kUnknown) {
      EmitUnknown(piece.substr(segment.begin, segment.end - segment.begin), ids);
    } else {
      ids->push_back(segment.id);
    }
  }
}

}  // namespace vllm::hf
