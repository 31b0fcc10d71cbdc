#include "tokenizer/hf/hf_tokenizer.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace vllm {
namespace {

using hf::Json;

// Real pipelines nest a few levels; deeper ones are refused rather than parsed recursively.
constexpr size_t kMaxNesting = 64;

Expected<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot read " + path.string()};
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Error{"cannot read " + path.string()};
  return buffer.str();
}

bool Contains(const std::vector<int32_t>& ids, int32_t id) {
  return id >= 0 && std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

Expected<std::unique_ptr<HfTokenizer>> HfTokenizer::Create(const Json& tokenizer,
                                                           const Json& config,
                                                           const Json& special_tokens_map) {
  if (!tokenizer.is_object()) return Error{"tokenizer.json: expected a JSON object"};
  if (!config.is_null() && !config.is_object()) {
    return Error{"tokenizer_config.json: expected a JSON object"};
  }
  std::unique_ptr<HfTokenizer> result(new HfTokenizer());
  const Json* model_json = hf::FindField(tokenizer, "model");
  if (model_json == nullptr) return Error{"tokenizer.json: missing \"model\""};
  auto model = hf::ParseModel(*model_json);
  if (!model) return Error{"tokenizer.json: " + model.error()};
  result->model_ = std::move(*model);

  static const Json kNull;
  auto section = [&](const char* key) -> const Json& {
    const Json* field = hf::FindField(tokenizer, key);
    return field == nullptr ? kNull : *field;
  };
  for (const char* key : {"normalizer", "pre_tokenizer", "post_processor", "decoder"}) {
    VLLM_RETURN_IF_ERROR(
        hf::CheckNestingDepth(section(key), kMaxNesting, std::string("tokenizer.json: ") + key));
  }
  auto normalizer = hf::ParseNormalizer(section("normalizer"));
  if (!normalizer) return Error{"tokenizer.json: " + normalizer.error()};
  result->normalizer_ = std::move(*normalizer);
  auto pre_tokenizer = hf::ParsePreTokenizer(section("pre_tokenizer"));
  if (!pre_tokenizer) return Error{"tokenizer.json: " + pre_tokenizer.error()};
  result->pre_tokenizer_ = std::move(*pre_tokenizer);
  auto decoder = hf::ParseDecoder(section("decoder"));
  if (!decoder) return Error{"tokenizer.json: " + decoder.error()};
  result->decoder_ = std::move(*decoder);
  auto frame = hf::ParsePostProcessor(section("post_processor"));
  if (!frame) return Error{"tokenizer.json: " + frame.error()};
  result->frame_ = std::move(*frame);

  // Added tokens: tokenizer.json's, then those only tokenizer_config.json lists.
  std::vector<hf::AddedToken> added;
  const Json& added_json = section("added_tokens");
  if (!added_json.is_null() && !added_json.is_array()) {
    return Error{"tokenizer.json: added_tokens: expected an array"};
  }
  for (size_t i = 0; i < added_json.size() && added_json.is_array(); ++i) {
    auto token =
        hf::ParseAddedToken(added_json[i], std::nullopt, "added_tokens[" + std::to_string(i) + "]");
    if (!token) return Error{"tokenizer.json: " + token.error()};
    added.push_back(std::move(*token));
  }
  if (const Json* decoder_map = hf::FindField(config, "added_tokens_decoder")) {
    if (!decoder_map->is_object()) {
      return Error{"tokenizer_config.json: added_tokens_decoder: expected an object"};
    }
    for (auto it = decoder_map->begin(); it != decoder_map->end(); ++it) {
      const std::string context = "added_tokens_decoder[\"" + it.key() + "\"]";
      int64_t id = -1;
      const std::string& key = it.key();
      if (!key.empty() && key.size() < 10 &&
          std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        id = std::stoll(key);
      }
      if (id < 0 || id > hf::kMaxTokenId) {
        return Error{"tokenizer_config.json: " + context + ": the key is not a token id"};
      }
      auto token = hf::ParseAddedToken(it.value(), static_cast<int32_t>(id), context);
      if (!token) return Error{"tokenizer_config.json: " + token.error()};
      const bool known = std::any_of(added.begin(), added.end(),
                                     [&](const hf::AddedToken& t) { return t.id == token->id; });
      if (!known) added.push_back(std::move(*token));
    }
  }
  std::vector<hf::AddedToken> raw, normalized;
  int64_t max_added_id = -1;
  for (const hf::AddedToken& token : added) {
    result->added_by_id_.insert_or_assign(token.id, token);
    result->added_by_content_.emplace(token.content, token.id);
    (token.normalized ? normalized : raw).push_back(token);
    max_added_id = std::max<int64_t>(max_added_id, token.id);
  }
  result->raw_added_ = std::make_unique<hf::AddedTokenMatcher>(raw);
  result->normalized_added_ = std::make_unique<hf::AddedTokenMatcher>(normalized);
  result->vocab_size_ = std::max<int64_t>(result->model_->vocab().size(), max_added_id + 1);
  std::vector<const std::vector<int32_t>*> frame_ids = {&result->frame_.prefix,
                                                        &result->frame_.suffix};
  for (const hf::PairPiece& piece : result->frame_.pair) frame_ids.push_back(&piece.special_ids);
  for (const auto* side : frame_ids) {
    for (int32_t id : *side) {
      if (id >= result->vocab_size_) {
        return Error{"tokenizer.json: post_processor: token id " + std::to_string(id) +
                     " is outside the vocabulary (size " + std::to_string(result->vocab_size_) +
                     ")"};
      }
    }
  }

  // BOS / EOS: tokenizer_config.json, else special_tokens_map.json.
  for (auto [key, id] :
       {std::pair{"bos_token", &result->bos_id_}, std::pair{"eos_token", &result->eos_id_}}) {
    auto text = hf::SpecialTokenField(config, key, "tokenizer_config.json");
    if (!text) return Error{text.error()};
    if (!*text) {
      text = hf::SpecialTokenField(special_tokens_map, key, "special_tokens_map.json");
      if (!text) return Error{text.error()};
    }
    if (*text && !(*text)->empty()) *id = result->TokenToId(**text).value_or(-1);
  }
  // add_bos_token / add_eos_token, when given, rebuild the frame as [BOS] $A [EOS].
  auto add_bos = hf::OptionalBoolField(config, "add_bos_token", "tokenizer_config.json");
  if (!add_bos) return Error{add_bos.error()};
  auto add_eos = hf::OptionalBoolField(config, "add_eos_token", "tokenizer_config.json");
  if (!add_eos) return Error{add_eos.error()};
  if (*add_bos || *add_eos) {
    const bool bos = add_bos->value_or(Contains(result->frame_.prefix, result->bos_id_));
    const bool eos = add_eos->value_or(Contains(result->frame_.suffix, result->eos_id_));
    result->frame_ = {};
    if (bos && result->bos_id_ >= 0) result->frame_.prefix.push_back(result->bos_id_);
    if (eos && result->eos_id_ >= 0) result->frame_.suffix.push_back(result->eos_id_);
    // As transformers' fast tokenizers build it: [BOS] A [EOS] [BOS]:1 B:1 [EOS]:1.
    using Kind = hf::PairPiece::Kind;
    const std::vector<int32_t>& prefix = result->frame_.prefix;
    const std::vector<int32_t>& suffix = result->frame_.suffix;
    result->frame_.pair = {{Kind::kSpecial, 0, prefix}, {Kind::kFirst, 0, {}},
                           {Kind::kSpecial, 0, suffix}, {Kind::kSpecial, 1, prefix},
                           {Kind::kSecond, 1, {}},      {Kind::kSpecial, 1, suffix}};
  }
  if (const Json* max_length = hf::FindField(config, "model_max_length")) {
    if (max_length->is_number_integer() && !max_length->is_number_unsigned() &&
        max_length->get<int64_t>() > 0) {
      result->model_max_length_ = max_length->get<int64_t>();
    } else if (max_length->is_number_unsigned() &&
               max_length->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
      result->model_max_length_ = static_cast<int64_t>(max_length->get<uint64_t>());
    }  // floats such as 1e30 mean "no limit"
  }
  return result;
}

std::optional<int32_t> HfTokenizer::TokenToId(std::string_view token) const {
  auto it = added_by_content_.find(token);
  if (it != added_by_content_.end()) return it->second;
  return model_->vocab().Find(token);
}

void HfTokenizer::EncodeText(std::string_view text, bool at_input_start,
                             std::vector<int32_t>* ids) const {
  const std::string normalized =
      normalizer_ ? normalizer_->Normalize(std::string(text)) : std::string(text);
  std::vector<hf::TextSegment> segments;
  if (normalized_added_->empty()) {
    if (!normalized.empty()) segments.push_back({-1, 0, normalized.size()});
  } else {
    segments = normalized_added_->Split(normalized);
  }
  std::vector<hf::PreToken> pieces;
  for (const hf::TextSegment& segment : segments) {
    if (segment.token_id >= 0) {
      ids->push_back(segment.token_id);
      continue;
    }
    pieces.clear();
    pieces.push_back({normalized.substr(segment.begin, segment.end - segment.begin),
                      at_input_start && segment.begin == 0});
    if (pre_tokenizer_) pre_tokenizer_->PreTokenize(&pieces);
    for (const hf::PreToken& piece : pieces) {
      if (!piece.text.empty()) model_->Tokenize(piece.text, ids);
    }
  }
}

std::vector<int32_t> HfTokenizer::Encode(std::string_view text, bool add_special_tokens) const {
  std::vector<int32_t> ids;
  if (add_special_tokens) ids = frame_.prefix;
  if (raw_added_->empty()) {
    if (!text.empty()) EncodeText(text, true, &ids);
  } else {
    for (const hf::TextSegment& segment : raw_added_->Split(text)) {
      if (segment.token_id >= 0) {
        ids.push_back(segment.token_id);
      } else {
        EncodeText(text.substr(segment.begin, segment.end - segment.begin), segment.begin == 0,
                   &ids);
      }
    }
  }
  if (add_special_tokens) ids.insert(ids.end(), frame_.suffix.begin(), frame_.suffix.end());
  return ids;
}

Tokenizer::EncodedPair HfTokenizer::EncodePair(std::string_view first,
                                               std::string_view second) const {
  EncodedPair pair;
  for (const hf::PairPiece& piece : frame_.pair) {
    if (piece.kind == hf::PairPiece::Kind::kSpecial) {
      pair.ids.insert(pair.ids.end(), piece.special_ids.begin(), piece.special_ids.end());
    } else {
      const std::vector<int32_t> ids =
          Encode(piece.kind == hf::PairPiece::Kind::kFirst ? first : second,
                 /*add_special_tokens=*/false);
      pair.ids.insert(pair.ids.end(), ids.begin(), ids.end());
    }
    pair.token_type_ids.resize(pair.ids.size(), piece.type_id);
  }
  return pair;
}

std::string HfTokenizer::Decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  return DecodeWith(ids, skip_special_tokens, /*keep_bytes=*/false);
}

std::string HfTokenizer::DecodeBytes(std::span<const int32_t> ids) const {
  return DecodeWith(ids, /*skip_special_tokens=*/true, /*keep_bytes=*/true);
}

std::string HfTokenizer::DecodeWith(std::span<const int32_t> ids, bool skip_special_tokens,
                                    bool keep_bytes) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    auto added = added_by_id_.find(id);
    if (added != added_by_id_.end()) {
      if (!(skip_special_tokens && added->second.special)) tokens.push_back(added->second.content);
      continue;
    }
    std::string_view token = model_->vocab().Token(id);
    if (!token.empty()) tokens.emplace_back(token);  // unknown ids are skipped
  }
  if (!decoder_) {
    std::string text;
    for (size_t i = 0; i < tokens.size(); ++i) text += (i > 0 ? " " : "") + tokens[i];
    return text;
  }
  if (keep_bytes) {
    decoder_->DecodeChainKeepingBytes(&tokens);
  } else {
    decoder_->DecodeChain(&tokens);
  }
  std::string text;
  for (const std::string& token : tokens) text += token;
  return text;
}

std::string_view HfTokenizer::TokenToPiece(int32_t id) const {
  auto added = added_by_id_.find(id);
  if (added != added_by_id_.end()) return added->second.content;
  return model_->vocab().Token(id);
}

bool HfTokenizer::IsSpecial(int32_t id) const {
  auto added = added_by_id_.find(id);
  return added != added_by_id_.end() && added->second.special;
}

Expected<std::unique_ptr<Tokenizer>> LoadTokenizerFromHfJson(
    std::string_view tokenizer_json, std::string_view config_json,
    std::string_view special_tokens_map_json) {
  try {
    auto tokenizer = hf::ParseJson(tokenizer_json, "tokenizer.json");
    if (!tokenizer) return Error{tokenizer.error()};
    Json config, special_tokens_map;
    if (!config_json.empty()) {
      auto parsed = hf::ParseJson(config_json, "tokenizer_config.json");
      if (!parsed) return Error{parsed.error()};
      config = std::move(*parsed);
    }
    if (!special_tokens_map_json.empty()) {
      auto parsed = hf::ParseJson(special_tokens_map_json, "special_tokens_map.json");
      if (!parsed) return Error{parsed.error()};
      special_tokens_map = std::move(*parsed);
    }
    auto result = HfTokenizer::Create(*tokenizer, config, special_tokens_map);
    if (!result) return Error{result.error()};
    return std::unique_ptr<Tokenizer>(std::move(*result));
  } catch (const std::exception& e) {  // a case the checks above missed: still not a crash
    return Error{std::string("cannot load the tokenizer: ") + e.what()};
  }
}

Expected<std::unique_ptr<Tokenizer>> LoadTokenizerFromHfDir(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path root(dir);
  std::error_code error;
  if (!fs::is_regular_file(root / "tokenizer.json", error)) {
    return Error{"no tokenizer.json in '" + dir + "'"};
  }
  auto tokenizer = ReadFile(root / "tokenizer.json");
  if (!tokenizer) return Error{tokenizer.error()};
  std::string optional_files[2];
  const char* names[2] = {"tokenizer_config.json", "special_tokens_map.json"};
  for (int i = 0; i < 2; ++i) {
    if (!fs::exists(root / names[i], error)) continue;
    auto text = ReadFile(root / names[i]);
    if (!text) return Error{text.error()};
    optional_files[i] = std::move(*text);
  }
  auto result = LoadTokenizerFromHfJson(*tokenizer, optional_files[0], optional_files[1]);
  if (!result) return Error{dir + ": " + result.error()};
  return result;
}

Expected<std::string> ReadHfChatTemplate(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path root(dir);
  std::error_code error;
  if (fs::is_regular_file(root / "chat_template.jinja", error)) {
    return ReadFile(root / "chat_template.jinja");
  }
  if (!fs::is_regular_file(root / "tokenizer_config.json", error)) return std::string();
  auto text = ReadFile(root / "tokenizer_config.json");
  if (!text) return Error{text.error()};
  auto config = hf::ParseJson(*text, "tokenizer_config.json");
  if (!config) return Error{config.error()};
  const hf::Json* chat_template = hf::FindField(*config, "chat_template");
  if (chat_template == nullptr) return std::string();
  if (chat_template->is_string()) return chat_template->get<std::string>();
  if (chat_template->is_array()) {
    for (const hf::Json& entry : *chat_template) {
      const hf::Json* name = hf::FindField(entry, "name");
      const hf::Json* body = hf::FindField(entry, "template");
      if (name && name->is_string() && *name == "default" && body && body->is_string()) {
        return body->get<std::string>();
      }
    }
    return std::string();
  }
  return Error{"tokenizer_config.json: chat_template must be a string or a list"};
}

}  // namespace vllm
