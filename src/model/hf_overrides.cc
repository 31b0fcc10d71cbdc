#include "model/hf_overrides.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/architecture.h"

namespace vllm {
namespace {

using Json = nlohmann::json;

constexpr const char* kSupportedKeys[] = {"architectures", "classifier_from_token",
                                          "is_original_qwen3_reranker", "is_matryoshka",
                                          "matryoshka_dimensions"};

// Architectures vLLM serves with the pooling runner by default.
bool IsPoolingArchitectureName(const std::string& name) {
  return name.ends_with("Model") || name.ends_with("ForSequenceClassification");
}

// The id of `token` (its stored text) in tokenizer.json's model.vocab or added_tokens; -1 when
// absent.
int64_t HfVocabTokenId(const Json& tokenizer, const std::string& token) {
  if (auto added = tokenizer.find("added_tokens"); added != tokenizer.end() && added->is_array()) {
    for (const Json& entry : *added) {
      if (entry.is_object() && entry.value("content", std::string()) == token &&
          entry.contains("id") && entry["id"].is_number_integer()) {
        return entry["id"].get<int64_t>();
      }
    }
  }
  auto model = tokenizer.find("model");
  if (model == tokenizer.end() || !model->is_object()) return -1;
  auto vocab = model->find("vocab");
  if (vocab == model->end() || !vocab->is_object()) return -1;
  auto it = vocab->find(token);
  return it != vocab->end() && it->is_number_integer() ? it->get<int64_t>() : -1;
}

}  // namespace

Expected<Json> ParseHfOverrides(const std::string& text) {
  if (text.empty()) return Json::object();
  Json overrides = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (overrides.is_discarded() || !overrides.is_object()) {
    return Error{"--hf-overrides must be a JSON object"};
  }
  std::string supported;
  for (const char* key : kSupportedKeys)
    supported += (supported.empty() ? "" : ", ") + std::string(key);
  for (const auto& [key, value] : overrides.items()) {
    if (std::find(std::begin(kSupportedKeys), std::end(kSupportedKeys), key) ==
        std::end(kSupportedKeys)) {
      return Error{"--hf-overrides: key '" + key + "' is not supported (supported: " + supported +
                   ")"};
    }
  }
  if (auto it = overrides.find("architectures"); it != overrides.end()) {
    if (!it->is_array() || it->size() != 1 || !it->front().is_string()) {
      return Error{"--hf-overrides: architectures must be a list of one architecture name"};
    }
  }
  PoolerConfig checked;
  Status status = ReadHfPoolingKeys(overrides, &checked);
  if (!status.ok()) return Error{"--hf-overrides: " + status.message()};
  return overrides;
}

Json MergeHfOverrides(Json config_json, const Json& overrides) {
  for (const auto& [key, value] : overrides.items()) config_json[key] = value;
  return config_json;
}

Status ReadHfPoolerConfig(const std::string& dir, const Json& config_json,
                          const std::string& hf_architecture, PoolerConfig* config) {
  VLLM_RETURN_IF_ERROR(ReadSentenceTransformersPooling(dir, config));
  Status keys = ReadHfPoolingKeys(config_json, config);
  if (!keys.ok()) return Error{"config.json: " + keys.message()};
  config->is_pooling_checkpoint = IsPoolingArchitectureName(hf_architecture);
  if (config->classifier_from_token.empty()) return Status::Ok();
  const std::filesystem::path path = std::filesystem::path(dir) / "tokenizer.json";
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  const Json tokenizer = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!file || !tokenizer.is_object()) {
    return Error{"classifier_from_token needs the vocabulary of " + path.string()};
  }
  return ResolveClassifierTokens(
      [&tokenizer](const std::string& token) { return HfVocabTokenId(tokenizer, token); }, config);
}

Status ApplyHfOverridesToGguf(const Json& overrides, const GgufFile& file, ModelConfig* config) {
  if (auto it = overrides.find("architectures"); it != overrides.end()) {
    const std::string name = it->front().get<std::string>();
    const Architecture* architecture = FindHfArchitecture(name);
    if (architecture == nullptr || architecture->name != config->architecture) {
      return Error{"--hf-overrides: architecture '" + name + "' is not one of the GGUF file's " +
                   config->architecture + " models"};
    }
    config->pooler.is_pooling_checkpoint = IsPoolingArchitectureName(name);
  }
  Status keys = ReadHfPoolingKeys(overrides, &config->pooler);
  if (!keys.ok()) return Error{"--hf-overrides: " + keys.message()};
  if (config->pooler.classifier_from_token.empty()) return Status::Ok();
  auto tokens = file.GetStringArray("tokenizer.ggml.tokens");
  if (!tokens) return Error{tokens.error()};
  if (!tokens->has_value()) return Error{"classifier_from_token needs tokenizer.ggml.tokens"};
  const std::vector<std::string>& vocab = **tokens;
  return ResolveClassifierTokens(
      [&vocab](const std::string& token) -> int64_t {
        auto it = std::find(vocab.begin(), vocab.end(), token);
        return it == vocab.end() ? -1 : it - vocab.begin();
      },
      &config->pooler);
}

}  // namespace vllm
