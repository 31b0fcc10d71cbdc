#include "tokenizer/hf/bpe_model.h"

#include "tokenizer/symbol_merge.h"

namespace vllm::hf {
namespace {

uint64_t PairKey(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(left) << 32) | static_cast<uint32_t>(right);
}

// One merge: "left right" or ["left", "right"].
Status ParseMerge(const Json& json, const std::string& context, std::string* left,
                  std::string* right) {
  if (json.is_string()) {
    const std::string line = json.get<std::string>();
    const size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
      return Error{context + ": expected \"left right\", got \"" + line + "\""};
    }
    *left = line.substr(0, space);
    *right = line.substr(space + 1);
    return Status::Ok();
  }
  if (json.is_array() && json.size() == 2 && json[0].is_string() && json[1].is_string()) {
    *left = json[0].get<std::string>();
    *right = json[1].get<std::string>();
    return Status::Ok();
  }
  return Error{context + ": expected \"left right\" or [\"left\", \"right\"]"};
}

}  // namespace

Expected<std::unique_ptr<Model>> BpeModel::Parse(const Json& json, std::string_view context) {
  auto vocab = Vocab::ParseField(json, context);
  if (!vocab) return Error{vocab.error()};
  std::unique_ptr<BpeModel> model(new BpeModel(std::move(*vocab)));

  auto prefix = OptionalStringField(json, "continuing_subword_prefix", context);
  if (!prefix) return Error{prefix.error()};
  model->prefix_ = prefix->value_or("");
  auto suffix = OptionalStringField(json, "end_of_word_suffix", context);
  if (!suffix) return Error{suffix.error()};
  model->suffix_ = suffix->value_or("");
  auto unk_id = ParseUnkToken(json, model->vocab_, context);
  if (!unk_id) return Error{unk_id.error()};
  model->unk_id_ = *unk_id;
  auto fuse_unk = BoolField(json, "fuse_unk", context, false);
  if (!fuse_unk) return Error{fuse_unk.error()};
  model->fuse_unk_ = *fuse_unk;
  auto byte_fallback = BoolField(json, "byte_fallback", context, false);
  if (!byte_fallback) return Error{byte_fallback.error()};
  model->byte_fallback_ = *byte_fallback;
  auto ignore_merges = BoolField(json, "ignore_merges", context, false);
  if (!ignore_merges) return Error{ignore_merges.error()};
  model->ignore_merges_ = *ignore_merges;
  model->byte_ids_ = model->vocab_.ByteTokenIds();

  const Json* merges = FindField(json, "merges");
  if (merges != nullptr && !merges->is_array()) {
    return Error{FieldName(context, "merges") + ": expected an array"};
  }
  const size_t merge_count = merges == nullptr ? 0 : merges->size();
  model->merge_ranks_.reserve(merge_count);
  std::string left, right, merged;
  for (size_t rank = 0; rank < merge_count; ++rank) {
    const std::string where = FieldName(context, "merges[" + std::to_string(rank) + "]");
    VLLM_RETURN_IF_ERROR(ParseMerge((*merges)[rank], where, &left, &right));
    auto left_id = model->vocab_.Find(left);
    auto right_id = model->vocab_.Find(right);
    std::string_view right_rest = right;
    if (!model->prefix_.empty() && right_rest.substr(0, model->prefix_.size()) == model->prefix_) {
      right_rest.remove_prefix(model->prefix_.size());
    }
    merged = left;
    merged += right_rest;
    auto merged_id = model->vocab_.Find(merged);
    if (!left_id || !right_id || !merged_id) {
      const std::string& unknown = !left_id ? left : !right_id ? right : merged;
      return Error{where + ": token '" + unknown + "' is not in the vocabulary"};
    }
    model->merge_ranks_.insert_or_assign(PairKey(*left_id, *right_id), static_cast<int32_t>(rank));
  }
  return std::unique_ptr<Model>(std::move(model));
}

std::string_view BpeModel::Decorate(std::string_view piece, std::string_view part,
                                    std::string* storage) const {
  const bool first = part.data() == piece.data();
  const bool last = part.data() + part.size() == piece.data() + piece.size();
  if ((first || prefix_.empty()) && (!last || suffix_.empty())) return part;
  storage->clear();
  if (!first) *storage += prefix_;
  storage->append(part);
  if (last) *storage += suffix_;
  return *storage;
}

void BpeModel::Tokenize(std::string_view piece, std::vector<int32_t>* ids) const {
  if (ignore_merges_) {
    if (auto id = vocab_.Find(piece)) {
      ids->push_back(*id);
      return;
    }
  }
  std::string left_storage, right_storage;
  auto rank_of = [&](std::string_view left, std::string_view right) -> std::optional<double> {
    auto left_id = vocab_.Find(Decorate(piece, left, &left_storage));
    if (!left_id) return std::nullopt;
    auto right_id = vocab_.Find(Decorate(piece, right, &right_storage));
    if (!right_id) return std::nullopt;
    auto it = merge_ranks_.find(PairKey(*left_id, *right_id));
    if (it == merge_ranks_.end()) return std::nullopt;
    return -static_cast<double>(it->second);  // lowest rank first
  };
  bool pending_unk = false;  // an unknown token not yet emitted (fuse_unk extends it)
  for (std::string_view part : MergeSymbols(piece, rank_of)) {
    const std::string_view token = Decorate(piece, part, &left_storage);
    if (auto id = vocab_.Find(token)) {
      if (pending_unk) ids->push_back(*unk_id_);
      pending_unk = false;
      ids->push_back(*id);
      continue;
    }
    if (byte_fallback_) {
      bool all_bytes = true;
      for (unsigned char byte : token) all_bytes = all_bytes && byte_ids_[byte] >= 0;
      if (all_bytes) {
        if (pending_unk) ids->push_back(*unk_id_);
        pending_unk = false;
        for (unsigned char byte : token) ids->push_back(byte_ids_[byte]);
        continue;
      }
    }
    if (!unk_id_) continue;  // no unknown token: the character is dropped
    if (pending_unk && !fuse_unk_) ids->push_back(*unk_id_);
    pending_unk = true;
  }
  if (pending_unk) ids->push_back(*unk_id_);
}

}  // namespace vllm::hf
