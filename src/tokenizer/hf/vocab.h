// A model's vocabulary ({"token": id, ...} in tokenizer.json), both ways.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/expected.h"
#include "tokenizer/hf/json_fields.h"

namespace vllm::hf {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

class Vocab {
 public:
  // Ids must be unique and lie in [0, kMaxTokenId]; gaps are allowed.
  static Expected<Vocab> Parse(const Json& json, std::string_view context);
  // A model's "vocab" field (BPE, WordPiece, WordLevel), parsed; an error naming it when missing.
  static Expected<Vocab> ParseField(const Json& model_json, std::string_view context);
  // tokens[id] for each id (a Unigram vocabulary); tokens must be unique and non-empty.
  static Expected<Vocab> FromTokens(std::vector<std::string> tokens, std::string_view context);

  std::optional<int32_t> Find(std::string_view token) const {
    auto it = token_to_id_.find(token);
    if (it == token_to_id_.end()) return std::nullopt;
    return it->second;
  }
  // Empty when `id` names no token.
  std::string_view Token(int32_t id) const {
    return id >= 0 && id < size() ? std::string_view(id_to_token_[id]) : std::string_view();
  }
  int32_t size() const { return static_cast<int32_t>(id_to_token_.size()); }  // largest id + 1
  // The ids of the byte-fallback tokens <0x00> ... <0xFF>; -1 where absent.
  std::array<int32_t, 256> ByteTokenIds() const;

 private:
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> token_to_id_;
  std::vector<std::string> id_to_token_;
};

}  // namespace vllm::hf
