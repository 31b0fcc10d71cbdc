#include "tokenizer/tekken_tokenizer.h"

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/byte_level.h"
#include "tokenizer/hf/base64.h"
#include "tokenizer/regex_splitter.h"
#include "tokenizer/symbol_merge.h"
#include "tokenizer/vocab_tokenizer.h"

namespace vllm {
namespace {

using Json = nlohmann::json;

// mistral-common's special tokens for tekken files that list none (before its v7 format).
constexpr const char* kDeprecatedSpecialTokens[] = {"<unk>",
                                                    "<s>",
                                                    "</s>",
                                                    "[INST]",
                                                    "[/INST]",
                                                    "[AVAILABLE_TOOLS]",
                                                    "[/AVAILABLE_TOOLS]",
                                                    "[TOOL_RESULTS]",
                                                    "[/TOOL_RESULTS]",
                                                    "[TOOL_CALLS]",
                                                    "[IMG]",
                                                    "<pad>",
                                                    "[IMG_BREAK]",
                                                    "[IMG_END]",
                                                    "[PREFIX]",
                                                    "[MIDDLE]",
                                                    "[SUFFIX]",
                                                    "[SYSTEM_PROMPT]",
                                                    "[/SYSTEM_PROMPT]",
                                                    "[TOOL_CONTENT]"};

// Tokens are stored in the GGUF vocabulary as byte-level text ("Ġthe"), so that every merge
// candidate is a string key and each symbol MergeSymbols starts from is one byte.
class TekkenTokenizer : public VocabTokenizer {
 public:
  TekkenTokenizer(GgufVocab vocab, RegexSplitter splitter, int32_t num_special_tokens)
      : VocabTokenizer(std::move(vocab), /*add_bos=*/true, /*add_eos=*/false),
        pre_tokenizer_(std::move(splitter)),
        num_special_tokens_(num_special_tokens) {}

  // mistral-common's IGNORE policy drops every special token; KEEP writes its text.
  std::string Decode(std::span<const int32_t> ids, bool skip_special_tokens) const override {
    std::string text;
    for (int32_t id : ids) {
      if (id < 0 || id >= vocab_size()) continue;
      if (id < num_special_tokens_) {
        if (!skip_special_tokens) text += vocab_.tokens[id];
        continue;
      }
      text += ByteLevelToBytes(vocab_.tokens[id]).value_or(std::string());
    }
    return text;
  }
  bool IsSpecial(int32_t id) const override { return id >= 0 && id < num_special_tokens_; }

 private:
  void EncodeFragment(std::string_view text, bool /*after_special*/,
                      std::vector<int32_t>* ids) const override {
    for (std::string_view piece : pre_tokenizer_.Split(text)) {
      if (piece.empty()) continue;
      const std::string symbols = BytesToByteLevel(piece);
      auto whole = vocab_.token_to_id.find(symbols);
      if (whole != vocab_.token_to_id.end()) {
        ids->push_back(whole->second);
        continue;
      }
      std::string joined;
      auto priority_of = [&](std::string_view left,
                             std::string_view right) -> std::optional<double> {
        joined.assign(left);
        joined.append(right);
        auto found = vocab_.token_to_id.find(joined);
        if (found == vocab_.token_to_id.end()) return std::nullopt;
        return -static_cast<double>(found->second);  // the lowest rank merges first
      };
      for (std::string_view symbol : MergeSymbols(symbols, priority_of)) {
        // Every single byte is a rank below 256, so each final symbol is in the vocabulary.
        ids->push_back(vocab_.token_to_id.at(std::string(symbol)));
      }
    }
  }

  RegexSplitter pre_tokenizer_;
  int32_t num_special_tokens_;
};

Expected<int64_t> IntegerField(const Json& object, const char* key, const std::string& context) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) {
    return Error{"tekken.json: " + context + key + ": expected an integer"};
  }
  return it->get<int64_t>();
}

}  // namespace

Expected<std::unique_ptr<Tokenizer>> LoadTekkenTokenizerFromJson(std::string_view json) {
  const Json root = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!root.is_object()) return Error{"tekken.json: expected a JSON object"};
  auto config = root.find("config");
  if (config == root.end() || !config->is_object()) {
    return Error{"tekken.json: config: expected an object"};
  }
  auto pattern = config->find("pattern");
  if (pattern == config->end() || !pattern->is_string()) {
    return Error{"tekken.json: config.pattern: expected a string"};
  }
  auto vocab_size = IntegerField(*config, "default_vocab_size", "config.");
  if (!vocab_size) return Error{vocab_size.error()};
  auto num_special = IntegerField(*config, "default_num_special_tokens", "config.");
  if (!num_special) return Error{num_special.error()};
  auto vocab_json = root.find("vocab");
  if (vocab_json == root.end() || !vocab_json->is_array()) {
    return Error{"tekken.json: vocab: expected an array"};
  }
  constexpr int64_t kMaxVocab = std::numeric_limits<int32_t>::max() / 2;
  if (*num_special < 3 || *num_special > *vocab_size || *vocab_size > kMaxVocab) {
    return Error{"tekken.json: config: default_num_special_tokens " + std::to_string(*num_special) +
                 " must be at least 3 and at most default_vocab_size " +
                 std::to_string(*vocab_size)};
  }
  const int64_t num_ranks = *vocab_size - *num_special;
  if (static_cast<int64_t>(vocab_json->size()) < num_ranks) {
    return Error{"tekken.json: vocab has " + std::to_string(vocab_json->size()) +
                 " entries, fewer than default_vocab_size - default_num_special_tokens (" +
                 std::to_string(num_ranks) + ")"};
  }

  GgufVocab vocab;
  vocab.model = "tekken";
  vocab.tokens.resize(static_cast<size_t>(*vocab_size));
  vocab.scores.assign(vocab.tokens.size(), 0.0f);
  vocab.types.assign(vocab.tokens.size(), TokenType::kNormal);
  // Special tokens: the file's list (each rank once), else mistral-common's older default list;
  // ranks it leaves out are <SPECIAL_n>.
  std::vector<bool> named(static_cast<size_t>(*num_special), false);
  auto set_special = [&](int64_t rank, std::string text, bool is_control) -> Status {
    if (rank < 0 || rank >= *num_special || named[rank]) {
      return Error{"tekken.json: special_tokens: rank " + std::to_string(rank) + " is outside 0.." +
                   std::to_string(*num_special - 1) + " or repeated"};
    }
    named[rank] = true;
    vocab.tokens[rank] = std::move(text);
    vocab.types[rank] = is_control ? TokenType::kControl : TokenType::kUserDefined;
    return Status::Ok();
  };
  auto specials = root.find("special_tokens");
  if (specials == root.end() || specials->is_null()) {
    int64_t rank = 0;
    for (const char* text : kDeprecatedSpecialTokens) {
      if (rank == *num_special) break;
      VLLM_RETURN_IF_ERROR(set_special(rank++, text, /*is_control=*/true));
    }
  } else if (!specials->is_array()) {
    return Error{"tekken.json: special_tokens: expected an array"};
  } else {
    for (const Json& special : *specials) {
      if (!special.is_object()) return Error{"tekken.json: special_tokens: expected objects"};
      auto rank = IntegerField(special, "rank", "special_tokens[].");
      if (!rank) return Error{rank.error()};
      auto text = special.find("token_str");
      if (text == special.end() || !text->is_string()) {
        return Error{"tekken.json: special_tokens[].token_str: expected a string"};
      }
      auto control = special.find("is_control");
      const bool is_control =
          control == special.end() || !control->is_boolean() || control->get<bool>();
      VLLM_RETURN_IF_ERROR(set_special(*rank, text->get<std::string>(), is_control));
    }
  }
  for (int64_t rank = 0; rank < *num_special; ++rank) {
    if (!named[rank])
      VLLM_RETURN_IF_ERROR(set_special(rank, "<SPECIAL_" + std::to_string(rank) + ">", true));
  }
  // The vocabulary by rank, cut at default_vocab_size as mistral-common cuts it.
  std::vector<bool> ranked(static_cast<size_t>(num_ranks), false);
  for (const Json& entry : *vocab_json) {
    if (!entry.is_object()) return Error{"tekken.json: vocab: expected objects"};
    auto rank = IntegerField(entry, "rank", "vocab[].");
    if (!rank) return Error{rank.error()};
    if (*rank < 0) return Error{"tekken.json: vocab: negative rank " + std::to_string(*rank)};
    if (*rank >= num_ranks) continue;
    if (ranked[*rank])
      return Error{"tekken.json: vocab: rank " + std::to_string(*rank) + " repeated"};
    auto encoded = entry.find("token_bytes");
    if (encoded == entry.end() || !encoded->is_string()) {
      return Error{"tekken.json: vocab[].token_bytes: expected a base64 string"};
    }
    auto bytes = hf::DecodeBase64(encoded->get<std::string>());
    if (!bytes || bytes->empty()) {
      return Error{"tekken.json: vocab: rank " + std::to_string(*rank) +
                   ": token_bytes is not non-empty base64"};
    }
    if (*rank < 256 && (bytes->size() != 1 || static_cast<unsigned char>((*bytes)[0]) != *rank)) {
      return Error{"tekken.json: vocab: rank " + std::to_string(*rank) +
                   " must be the single byte of that value"};
    }
    ranked[*rank] = true;
    vocab.tokens[*num_special + *rank] = BytesToByteLevel(*bytes);
  }
  for (int64_t rank = 0; rank < num_ranks; ++rank) {
    if (!ranked[rank])
      return Error{"tekken.json: vocab: rank " + std::to_string(rank) + " is missing"};
  }
  if (num_ranks < 256) return Error{"tekken.json: the vocabulary must hold the 256 single bytes"};
  // token_to_id holds the ranked tokens only: a special token's text may also be plain bytes.
  vocab.token_to_id.reserve(static_cast<size_t>(num_ranks));
  for (int64_t id = *num_special; id < *vocab_size; ++id) {
    if (!vocab.token_to_id.emplace(vocab.tokens[id], static_cast<int32_t>(id)).second) {
      return Error{"tekken.json: vocab: the bytes of rank " + std::to_string(id - *num_special) +
                   " appear twice"};
    }
  }
  auto id_of = [&](std::string_view text) -> int32_t {
    for (int64_t id = 0; id < *num_special; ++id) {
      if (vocab.tokens[id] == text) return static_cast<int32_t>(id);
    }
    return -1;
  };
  vocab.unk_id = id_of("<unk>");
  vocab.bos_id = id_of("<s>");
  vocab.eos_id = id_of("</s>");
  vocab.pad_id = id_of("<pad>");
  auto splitter = RegexSplitter::Create({pattern->get<std::string>()});
  if (!splitter) return Error{"tekken.json: config.pattern: " + splitter.error()};
  return std::unique_ptr<Tokenizer>(new TekkenTokenizer(std::move(vocab), std::move(*splitter),
                                                        static_cast<int32_t>(*num_special)));
}

Expected<std::unique_ptr<Tokenizer>> LoadTekkenTokenizer(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error{"cannot open '" + path + "'"};
  std::stringstream text;
  text << file.rdbuf();
  auto tokenizer = LoadTekkenTokenizerFromJson(text.str());
  if (!tokenizer) return Error{path + ": " + tokenizer.error()};
  return tokenizer;
}

std::string_view MistralInstructChatTemplate() {
  return R"TEMPLATE({%- if tools -%}
{{- raise_exception('tools are not supported by the built-in Mistral chat template (tokenizer mode mistral); give the model a chat template with --chat-template') -}}
{%- endif -%}
{%- set ns = namespace(system='', last_user=-1) -%}
{%- for message in messages -%}
{%- if message['role'] == 'system' -%}
{%- set ns.system = ns.system + ('\n\n' if ns.system else '') + message['content'] -%}
{%- elif message['role'] == 'user' -%}
{%- set ns.last_user = loop.index0 -%}
{%- elif message['role'] != 'assistant' -%}
{{- raise_exception('the built-in Mistral chat template takes system, user and assistant messages, not ' + message['role']) -}}
{%- endif -%}
{%- endfor -%}
{{- bos_token -}}
{%- for message in messages -%}
{%- if message['role'] == 'user' -%}
{{- '[INST]' -}}
{%- if loop.index0 == ns.last_user and ns.system -%}{{- ns.system + '\n\n' -}}{%- endif -%}
{{- message['content'] + '[/INST]' -}}
{%- elif message['role'] == 'assistant' -%}
{{- message['content'] + eos_token -}}
{%- endif -%}
{%- endfor -%})TEMPLATE";
}

}  // namespace vllm
