#include "model/hf_overrides.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/architecture.h"

namespace vllm {
namespace {

using Json = nlohmann::json;

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

// The shapes of the RoPE keys, checked when the flags are read rather than at load.
Status CheckRopeKeys(const Json& overrides, const std::string& flag) {
  if (auto it = overrides.find("rope_scaling");
      it != overrides.end() && !it->is_null() && !it->is_object()) {
    return Error{flag +
                 ": rope_scaling must be a JSON object, e.g. {\"rope_type\": \"yarn\", "
                 "\"factor\": 4.0, \"original_max_position_embeddings\": 32768}"};
  }
  if (auto it = overrides.find("rope_theta");
      it != overrides.end() && !(it->is_number() && it->get<double>() > 0)) {
    return Error{flag + ": rope_theta must be a positive number"};
  }
  return Status::Ok();
}

// config.json's nested configs, which vLLM updates key by key; quantization_config stays a plain
// object in transformers, replaced whole.
bool IsNestedConfigKey(const std::string& key) {
  return key.ends_with("_config") && key != "quantization_config";
}

// vLLM's recursive update of a nested config: objects merge, anything else replaces.
void MergeRecursively(Json* target, const Json& updates) {
  for (const auto& [key, value] : updates.items()) {
    auto it = target->find(key);
    if (value.is_object() && it != target->end() && it->is_object()) {
      MergeRecursively(&*it, value);
    } else {
      (*target)[key] = value;
    }
  }
}

}  // namespace

Expected<Json> ParseHfOverrides(const std::string& text) {
  if (text.empty()) return Json::object();
  Json overrides = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (overrides.is_discarded() || !overrides.is_object()) {
    return Error{"--hf-overrides must be a JSON object"};
  }
  if (auto it = overrides.find("architectures"); it != overrides.end()) {
    if (!it->is_array() || it->size() != 1 || !it->front().is_string()) {
      return Error{"--hf-overrides: architectures must be a list of one architecture name"};
    }
  }
  VLLM_RETURN_IF_ERROR(CheckRopeKeys(overrides, "--hf-overrides"));
  PoolerConfig checked;
  Status status = ReadHfPoolingKeys(overrides, &checked);
  if (!status.ok()) return Error{"--hf-overrides: " + status.message()};
  return overrides;
}

Expected<Json> AddRopeOverrides(Json overrides, const std::string& rope_scaling,
                                std::optional<double> rope_theta) {
  if (!rope_scaling.empty()) {
    Json scaling = Json::parse(rope_scaling, nullptr, /*allow_exceptions=*/false);
    if (scaling.is_discarded()) return Error{"--rope-scaling must be a JSON object"};
    VLLM_RETURN_IF_ERROR(
        CheckRopeKeys(Json::object({{"rope_scaling", scaling}}), "--rope-scaling"));
    overrides["rope_scaling"] = std::move(scaling);
  }
  if (rope_theta) {
    VLLM_RETURN_IF_ERROR(
        CheckRopeKeys(Json::object({{"rope_theta", *rope_theta}}), "--rope-theta"));
    overrides["rope_theta"] = *rope_theta;
  }
  return overrides;
}

Json MergeHfOverrides(Json config_json, const Json& overrides) {
  for (const auto& [key, value] : overrides.items()) {
    auto it = config_json.find(key);
    if (IsNestedConfigKey(key) && value.is_object() && it != config_json.end() && it->is_object()) {
      MergeRecursively(&*it, value);
    } else {
      config_json[key] = value;
    }
  }
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
