// Test helpers: vocabularies and masks read back as token lists.
#include "structured_output/test_vocabulary.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

namespace vllm {
namespace {

// GPT-2's byte-level alphabet read backwards: the character standing for each byte -> the byte.
std::map<uint32_t, uint8_t> ByteLevelDecoding() {
  std::map<uint32_t, uint8_t> decoding;
  uint32_t next_unprintable = 256;
  for (int byte = 0; byte < 256; ++byte) {
    const bool printable =
        (byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || (byte >= 174);
    decoding[printable ? byte : next_unprintable++] = static_cast<uint8_t>(byte);
  }
  return decoding;
}

std::optional<std::string> DecodeByteLevel(const std::string& text,
                                           const std::map<uint32_t, uint8_t>& decoding) {
  std::string bytes;
  for (size_t i = 0; i < text.size();) {
    const uint8_t lead = static_cast<uint8_t>(text[i]);
    const int length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    if (i + length > text.size()) return std::nullopt;
    uint32_t code_point = length == 1 ? lead : lead & (0x7F >> length);
    for (int k = 1; k < length; ++k) code_point = (code_point << 6) | (text[i + k] & 0x3F);
    auto it = decoding.find(code_point);
    if (it == decoding.end()) return std::nullopt;
    bytes.push_back(static_cast<char>(it->second));
    i += length;
  }
  return bytes;
}

}  // namespace

TokenVocabulary MakeVocabulary(std::vector<std::string> tokens,
                               std::vector<int32_t> stop_token_ids) {
  return TokenVocabulary{.token_bytes = std::move(tokens),
                         .stop_token_ids = std::move(stop_token_ids)};
}

std::optional<TokenVocabulary> LoadByteLevelVocabulary(
    const std::string& tokenizer_json_path, const std::vector<std::string>& stop_token_contents) {
  std::ifstream file(tokenizer_json_path);
  if (!file) return std::nullopt;
  const nlohmann::json json = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return std::nullopt;
  const std::map<uint32_t, uint8_t> decoding = ByteLevelDecoding();
  TokenVocabulary vocabulary;
  auto set_token = [&](int64_t id, std::string bytes) {
    if (id < 0) return;
    if (static_cast<size_t>(id) >= vocabulary.token_bytes.size()) {
      vocabulary.token_bytes.resize(id + 1);
    }
    vocabulary.token_bytes[id] = std::move(bytes);
  };
  for (const auto& [text, id] : json["model"]["vocab"].items()) {
    std::optional<std::string> bytes = DecodeByteLevel(text, decoding);
    if (bytes) set_token(id.get<int64_t>(), std::move(*bytes));
  }
  for (const nlohmann::json& added : json["added_tokens"]) {
    const int64_t id = added["id"].get<int64_t>();
    const std::string content = added["content"].get<std::string>();
    const bool special = added["special"].get<bool>();
    set_token(id, special ? "" : content);
    for (const std::string& stop : stop_token_contents) {
      if (content == stop) vocabulary.stop_token_ids.push_back(static_cast<int32_t>(id));
    }
  }
  return vocabulary;
}

std::vector<int32_t> AllowedTokens(std::span<const uint32_t> mask, int64_t vocab_size) {
  std::vector<int32_t> allowed;
  for (int64_t id = 0; id < vocab_size; ++id) {
    if ((mask[id / 32] >> (id % 32)) & 1u) allowed.push_back(static_cast<int32_t>(id));
  }
  return allowed;
}

std::vector<int32_t> MaskedTokens(GrammarMatcher& matcher, int64_t vocab_size) {
  std::vector<uint32_t> mask(TokenBitmaskWords(vocab_size), 0xFFFFFFFFu);
  matcher.FillNextTokenBitmask(mask);
  return AllowedTokens(mask, vocab_size);
}

std::vector<int32_t> BruteForceAllowedTokens(const GrammarMatcher& matcher, int64_t vocab_size) {
  std::vector<int32_t> allowed;
  for (int32_t id = 0; id < vocab_size; ++id) {
    GrammarMatcher copy = matcher;
    if (copy.AcceptToken(id)) allowed.push_back(id);
  }
  return allowed;
}

std::shared_ptr<const CompiledGrammar> CompileGbnf(const std::string& gbnf) {
  static const std::shared_ptr<const IndexedVocabulary> vocabulary = IndexVocabulary({});
  auto compiled = CompiledGrammar::Compile(gbnf, vocabulary);
  EXPECT_TRUE(compiled.ok()) << compiled.error() << "\n" << gbnf.substr(0, 2000);
  return compiled.ok() ? *compiled : nullptr;
}

bool Accepts(const std::shared_ptr<const CompiledGrammar>& grammar, std::string_view text) {
  if (grammar == nullptr) return false;
  GrammarMatcher matcher(grammar);
  return matcher.AcceptString(text) && matcher.IsCompleted();
}

}  // namespace vllm
