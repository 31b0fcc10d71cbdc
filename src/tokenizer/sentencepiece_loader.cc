#include "tokenizer/sentencepiece_loader.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>

#include "common/mapped_file.h"
#include "tokenizer/hf/added_tokens.h"
#include "tokenizer/hf/json_fields.h"
#include "tokenizer/precompiled_charsmap.h"
#include "tokenizer/sentencepiece_model.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/ugm_tokenizer.h"

namespace vllm {
namespace {

using hf::Json;

// added_tokens_decoder's tokens by id ({"32000": {"content": "<pad>", "special": true, ...}}).
Expected<std::map<int32_t, hf::AddedToken>> ParseAddedTokensDecoder(const Json& config) {
  std::map<int32_t, hf::AddedToken> tokens;
  const Json* decoder = hf::FindField(config, "added_tokens_decoder");
  if (decoder == nullptr) return tokens;
  if (!decoder->is_object()) {
    return Error{"tokenizer_config.json: added_tokens_decoder: expected an object"};
  }
  for (auto it = decoder->begin(); it != decoder->end(); ++it) {
    const std::string& key = it.key();
    const std::string context = "added_tokens_decoder[\"" + key + "\"]";
    const bool is_number =
        !key.empty() && key.size() < 10 &&
        std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!is_number || std::stoll(key) > hf::kMaxTokenId) {
      return Error{"tokenizer_config.json: " + context + ": the key is not a token id"};
    }
    auto token = hf::ParseAddedToken(it.value(), static_cast<int32_t>(std::stoll(key)), context);
    if (!token) return Error{"tokenizer_config.json: " + token.error()};
    tokens.emplace(token->id, std::move(*token));
  }
  return tokens;
}

// Added tokens replace the text of the pieces they name (special ones become control tokens,
// the others user-defined: both are split out of text before the model runs) or follow them.
Status AddTokens(const std::map<int32_t, hf::AddedToken>& added, GgufVocab* vocab) {
  for (const auto& [id, token] : added) {
    const auto size = static_cast<int32_t>(vocab->tokens.size());
    if (id > size) {
      return Error{"tokenizer_config.json: added_tokens_decoder: id " + std::to_string(id) +
                   " leaves a gap after the " + std::to_string(size) + " tokens before it"};
    }
    if (token.content.empty()) {
      return Error{"tokenizer_config.json: added_tokens_decoder[\"" + std::to_string(id) +
                   "\"]: empty content"};
    }
    if (id == size) {
      vocab->tokens.push_back(token.content);
      vocab->scores.push_back(0.0f);
      vocab->types.push_back(TokenType::kNormal);
    }
    vocab->tokens[id] = token.content;
    TokenType& type = vocab->types[id];
    if (!token.special) {
      type = TokenType::kUserDefined;
    } else if (type != TokenType::kUnknown) {
      type = TokenType::kControl;
    }
  }
  return Status::Ok();
}

// bos_token / eos_token / unk_token: tokenizer_config.json, else special_tokens_map.json.
Status ReadSpecialToken(const Json& config, const Json& special_tokens_map, const char* key,
                        const GgufVocab& vocab, int32_t* id) {
  auto text = hf::SpecialTokenField(config, key, "tokenizer_config.json");
  if (!text) return Error{text.error()};
  if (!*text) {
    text = hf::SpecialTokenField(special_tokens_map, key, "special_tokens_map.json");
    if (!text) return Error{text.error()};
  }
  if (!*text) return Status::Ok();
  if ((*text)->empty()) {
    *id = -1;
    return Status::Ok();
  }
  auto found = vocab.token_to_id.find(**text);
  if (found == vocab.token_to_id.end()) {
    return Error{std::string(key) + " '" + **text +
                 "' is neither a piece of tokenizer.model nor an added token"};
  }
  *id = found->second;
  return Status::Ok();
}

Expected<GgufVocab> BuildVocab(SentencePieceModel model, const Json& config,
                               const Json& special_tokens_map) {
  if (model.model_type != SentencePieceModel::Type::kBpe &&
      model.model_type != SentencePieceModel::Type::kUnigram) {
    return Error{
        "tokenizer.model: model_type " +
        std::string(model.model_type == SentencePieceModel::Type::kWord ? "WORD" : "CHAR") +
        " is not supported (UNIGRAM and BPE are)"};
  }
  if (!model.escape_whitespaces) {
    return Error{
        "tokenizer.model: normalizer_spec.escape_whitespaces = false is not supported (spaces "
        "are written as U+2581)"};
  }
  GgufVocab vocab;
  const bool is_bpe = model.model_type == SentencePieceModel::Type::kBpe;
  vocab.model = is_bpe ? "llama" : "t5";
  vocab.tokens.reserve(model.pieces.size());
  vocab.scores.reserve(model.pieces.size());
  vocab.types.reserve(model.pieces.size());
  for (SentencePieceModel::Piece& piece : model.pieces) {
    vocab.tokens.push_back(std::move(piece.text));
    vocab.scores.push_back(piece.score);
    vocab.types.push_back(piece.type);
  }
  vocab.unk_id = model.unk_id;
  vocab.bos_id = model.bos_id;
  vocab.eos_id = model.eos_id;
  vocab.pad_id = model.pad_id;
  vocab.add_space_prefix = model.add_dummy_prefix;
  if (!is_bpe) {
    vocab.precompiled_charsmap = std::move(model.precompiled_charsmap);
    vocab.remove_extra_whitespaces = model.remove_extra_whitespaces;
  }

  if (!config.is_null() && !config.is_object()) {
    return Error{"tokenizer_config.json: expected a JSON object"};
  }
  auto added = ParseAddedTokensDecoder(config);
  if (!added) return Error{added.error()};
  VLLM_RETURN_IF_ERROR(AddTokens(*added, &vocab));
  vocab.token_to_id.reserve(vocab.tokens.size());
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    vocab.token_to_id.emplace(vocab.tokens[id], static_cast<int32_t>(id));
  }
  VLLM_RETURN_IF_ERROR(
      ReadSpecialToken(config, special_tokens_map, "bos_token", vocab, &vocab.bos_id));
  VLLM_RETURN_IF_ERROR(
      ReadSpecialToken(config, special_tokens_map, "eos_token", vocab, &vocab.eos_id));
  VLLM_RETURN_IF_ERROR(
      ReadSpecialToken(config, special_tokens_map, "unk_token", vocab, &vocab.unk_id));
  auto add_bos = hf::OptionalBoolField(config, "add_bos_token", "tokenizer_config.json");
  if (!add_bos) return Error{add_bos.error()};
  auto add_eos = hf::OptionalBoolField(config, "add_eos_token", "tokenizer_config.json");
  if (!add_eos) return Error{add_eos.error()};
  vocab.add_bos = *add_bos;
  vocab.add_eos = *add_eos;
  // transformers' "legacy" (default true) LlamaTokenizer adds the space prefix after special
  // tokens as well; T5's Unigram path always adds it.
  auto legacy = hf::OptionalBoolField(config, "legacy", "tokenizer_config.json");
  if (!legacy) return Error{legacy.error()};
  vocab.space_prefix_after_special = legacy->value_or(true);
  return vocab;
}

Expected<Json> ParseOptionalJson(std::string_view text, std::string_view what) {
  if (text.empty()) return Json();
  return hf::ParseJson(text, what);
}

}  // namespace

Expected<std::unique_ptr<Tokenizer>> LoadSentencePieceTokenizer(
    std::string_view model_bytes, std::string_view config_json,
    std::string_view special_tokens_map_json) {
  auto model = ParseSentencePieceModel(model_bytes);
  if (!model) return Error{model.error()};
  auto config = ParseOptionalJson(config_json, "tokenizer_config.json");
  if (!config) return Error{config.error()};
  auto special_tokens_map = ParseOptionalJson(special_tokens_map_json, "special_tokens_map.json");
  if (!special_tokens_map) return Error{special_tokens_map.error()};
  auto vocab = BuildVocab(std::move(*model), *config, *special_tokens_map);
  if (!vocab) return Error{vocab.error()};
  if (vocab->model == "t5") {
    // Checked here too, for an error that names this file's field.
    auto charsmap = PrecompiledCharsmap::Parse(vocab->precompiled_charsmap);
    if (!charsmap) {
      return Error{"tokenizer.model: normalizer_spec.precompiled_charsmap: " + charsmap.error()};
    }
    return UgmTokenizer::Create(std::move(*vocab));
  }
  return std::unique_ptr<Tokenizer>(new SpmTokenizer(std::move(*vocab)));
}

Expected<std::unique_ptr<Tokenizer>> LoadSentencePieceTokenizerFromDir(const std::string& dir) {
  namespace fs = std::filesystem;
  // Mapped, not copied: the parse copies what it keeps.
  std::unique_ptr<MappedFile> files[3];
  const char* const names[3] = {"tokenizer.model", "tokenizer_config.json",
                                "special_tokens_map.json"};
  std::string_view contents[3];
  for (int i = 0; i < 3; ++i) {
    std::error_code error;
    if (i > 0 && !fs::exists(fs::path(dir) / names[i], error)) continue;
    auto file = MappedFile::Open((fs::path(dir) / names[i]).string());
    if (!file) return Error{file.error()};
    files[i] = std::move(*file);
    contents[i] =
        std::string_view(reinterpret_cast<const char*>(files[i]->data()), files[i]->size());
  }
  auto tokenizer = LoadSentencePieceTokenizer(contents[0], contents[1], contents[2]);
  if (!tokenizer) return Error{dir + ": " + tokenizer.error()};
  return tokenizer;
}

}  // namespace vllm
