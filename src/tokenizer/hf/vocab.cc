#include "tokenizer/hf/vocab.h"

#include <cstdio>

namespace vllm::hf {

Expected<Vocab> Vocab::ParseField(const Json& model_json, std::string_view context) {
  const Json* vocab_json = FindField(model_json, "vocab");
  if (vocab_json == nullptr) return Error{FieldName(context, "vocab") + ": missing"};
  return Parse(*vocab_json, FieldName(context, "vocab"));
}

Expected<Vocab> Vocab::Parse(const Json& json, std::string_view context) {
  if (!json.is_object()) return Error{std::string(context) + ": expected an object {token: id}"};
  Vocab vocab;
  vocab.token_to_id_.reserve(json.size());
  for (auto it = json.begin(); it != json.end(); ++it) {
    auto id = TokenIdFromJson(it.value(), std::string(context) + "[\"" + it.key() + "\"]");
    if (!id) return Error{id.error()};
    if (*id >= vocab.size()) vocab.id_to_token_.resize(static_cast<size_t>(*id) + 1);
    if (!vocab.id_to_token_[*id].empty()) {
      return Error{std::string(context) + ": id " + std::to_string(*id) + " is used by both '" +
                   vocab.id_to_token_[*id] + "' and '" + it.key() + "'"};
    }
    if (it.key().empty()) return Error{std::string(context) + ": empty token"};
    vocab.id_to_token_[*id] = it.key();
    vocab.token_to_id_.emplace(it.key(), *id);
  }
  return vocab;
}

Expected<Vocab> Vocab::FromTokens(std::vector<std::string> tokens, std::string_view context) {
  Vocab vocab;
  vocab.token_to_id_.reserve(tokens.size());
  for (size_t id = 0; id < tokens.size(); ++id) {
    if (tokens[id].empty()) return Error{std::string(context) + ": empty token"};
    auto [it, inserted] = vocab.token_to_id_.emplace(tokens[id], static_cast<int32_t>(id));
    if (!inserted) {
      return Error{std::string(context) + ": '" + tokens[id] + "' appears twice (ids " +
                   std::to_string(it->second) + " and " + std::to_string(id) + ")"};
    }
  }
  vocab.id_to_token_ = std::move(tokens);
  return vocab;
}

std::array<int32_t, 256> Vocab::ByteTokenIds() const {
  std::array<int32_t, 256> ids;
  for (int byte = 0; byte < 256; ++byte) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", byte);
    ids[byte] = Find(name).value_or(-1);
  }
  return ids;
}

}  // namespace vllm::hf
