#include "model/pooling_config.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace vllm {
namespace {

using Json = nlohmann::json;

// The parsed JSON file at `path`; a discarded value when the file is absent.
Expected<Json> ReadJsonFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Json(Json::value_t::discarded);
  std::stringstream text;
  text << file.rdbuf();
  Json json = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Error{path.string() + " is not valid JSON"};
  return json;
}

}  // namespace

Expected<PoolingType> PoolingTypeFromName(const std::string& name) {
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (PoolingType type :
       {PoolingType::kCls, PoolingType::kMean, PoolingType::kLast, PoolingType::kAll}) {
    if (upper == PoolingTypeName(type)) return type;
  }
  return Error{"unknown pooling type '" + name + "' (supported: CLS, MEAN, LAST, ALL)"};
}

const char* PoolingTypeName(PoolingType type) {
  switch (type) {
    case PoolingType::kCls:
      return "CLS";
    case PoolingType::kMean:
      return "MEAN";
    case PoolingType::kLast:
      return "LAST";
    case PoolingType::kAll:
      return "ALL";
    case PoolingType::kUnset:
      break;
  }
  return "";
}

Expected<PoolingType> PoolingTypeFromGguf(int64_t value, bool is_decoder) {
  switch (value) {
    case 0:
      return PoolingType::kAll;
    case 1:
      return PoolingType::kMean;
    case 4:
      return is_decoder ? PoolingType::kLast : PoolingType::kCls;
    case 2:
      return PoolingType::kCls;
    case 3:
      return PoolingType::kLast;
    default:
      return Error{"unsupported pooling_type " + std::to_string(value) +
                   " (supported: 0 none, 1 mean, 2 cls, 3 last, 4 rank)"};
  }
}

Status ReadGgufDecoderPooling(const GgufFile& file, const std::string& architecture,
                              PoolerConfig* config) {
  auto pooling = file.GetInt(architecture + ".pooling_type");
  if (!pooling) return Error{pooling.error()};
  if (!pooling->has_value()) return Status::Ok();
  auto type = PoolingTypeFromGguf(**pooling, /*is_decoder=*/true);
  if (!type) return Error{type.error()};
  config->pooling_type = *type;
  config->is_pooling_checkpoint = true;
  return Status::Ok();
}

Status ReadSentenceTransformersPooling(const std::string& dir, PoolerConfig* config) {
  namespace fs = std::filesystem;
  const fs::path modules_path = fs::path(dir) / "modules.json";
  auto modules = ReadJsonFile(modules_path);
  if (!modules) return Error{modules.error()};
  if (modules->is_discarded()) return Status::Ok();
  if (!modules->is_array()) return Error{modules_path.string() + " must be a JSON array"};
  for (const Json& module : *modules) {
    if (!module.is_object()) return Error{modules_path.string() + " must hold objects"};
    const std::string type = module.value("type", std::string());
    if (type.ends_with("Normalize")) config->normalize = true;
    if (!type.ends_with("Pooling")) continue;
    const fs::path pooling_path =
        fs::path(dir) / module.value("path", std::string()) / "config.json";
    auto pooling = ReadJsonFile(pooling_path);
    if (!pooling) return Error{pooling.error()};
    if (!pooling->is_object()) return Error{"cannot read " + pooling_path.string()};
    // One mode flag is true; the first of these that is wins.
    const std::pair<const char*, PoolingType> modes[] = {
        {"pooling_mode_cls_token", PoolingType::kCls},
        {"pooling_mode_mean_tokens", PoolingType::kMean},
        {"pooling_mode_lasttoken", PoolingType::kLast}};
    bool found = false;
    for (const auto& [key, mode] : modes) {
      auto it = pooling->find(key);
      if (it != pooling->end() && it->is_boolean() && it->get<bool>()) {
        config->pooling_type = mode;
        found = true;
        break;
      }
    }
    if (!found) {
      return Error{pooling_path.string() +
                   ": no supported pooling mode (cls_token, mean_tokens, lasttoken)"};
    }
  }
  return Status::Ok();
}

Expected<std::vector<DenseModuleFiles>> ReadSentenceTransformersDense(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<DenseModuleFiles> dense;
  auto modules = ReadJsonFile(fs::path(dir) / "modules.json");
  if (!modules) return Error{modules.error()};
  if (!modules->is_array()) return dense;  // absent (malformed: ReadSentenceTransformersPooling)
  for (const Json& module : *modules) {
    if (!module.is_object() || !module.value("type", std::string()).ends_with("Dense")) continue;
    const fs::path module_dir = fs::path(dir) / module.value("path", std::string());
    const fs::path config_path = module_dir / "config.json";
    auto config = ReadJsonFile(config_path);
    if (!config) return Error{config.error()};
    if (!config->is_object()) return Error{"cannot read " + config_path.string()};
    const std::string activation = config->value("activation_function", std::string());
    if (config->value("bias", true) || !activation.ends_with("Identity")) {
      return Error{config_path.string() +
                   ": only Dense modules without a bias and with the identity activation are "
                   "supported"};
    }
    auto index = module.find("idx");
    if (index == module.end() || !index->is_number_integer() || index->get<int64_t>() < 1 ||
        index->get<int64_t>() > 9) {
      return Error{"modules.json: a Dense module needs an idx in 1..9"};
    }
    dense.push_back({index->get<int64_t>(), module_dir.string()});
  }
  return dense;
}

Status ReadHfPoolingKeys(const Json& config_json, PoolerConfig* config) {
  if (auto it = config_json.find("is_matryoshka"); it != config_json.end() && !it->is_null()) {
    if (!it->is_boolean()) return Error{"is_matryoshka must be a boolean"};
    config->is_matryoshka = it->get<bool>();
  }
  if (auto it = config_json.find("matryoshka_dimensions");
      it != config_json.end() && !it->is_null()) {
    if (!it->is_array()) return Error{"matryoshka_dimensions must be a list of positive integers"};
    config->matryoshka_dimensions.clear();
    for (const Json& value : *it) {
      if (!value.is_number_integer() || value.get<int64_t>() < 1) {
        return Error{"matryoshka_dimensions must be a list of positive integers"};
      }
      config->matryoshka_dimensions.push_back(value.get<int64_t>());
    }
    config->is_matryoshka = true;
  }
  if (auto it = config_json.find("classifier_from_token");
      it != config_json.end() && !it->is_null()) {
    if (!it->is_array() || it->empty()) {
      return Error{"classifier_from_token must be a non-empty list of token strings"};
    }
    config->classifier_from_token.clear();
    for (const Json& value : *it) {
      if (!value.is_string()) {
        return Error{"classifier_from_token must be a non-empty list of token strings"};
      }
      config->classifier_from_token.push_back(value.get<std::string>());
    }
  }
  if (auto it = config_json.find("is_original_qwen3_reranker");
      it != config_json.end() && !it->is_null()) {
    if (!it->is_boolean()) return Error{"is_original_qwen3_reranker must be a boolean"};
    config->is_original_qwen3_reranker = it->get<bool>();
  }
  if (config->is_original_qwen3_reranker && config->classifier_from_token.size() != 2) {
    return Error{
        "is_original_qwen3_reranker needs classifier_from_token with two tokens "
        "(false, true), e.g. [\"no\", \"yes\"]"};
  }
  return Status::Ok();
}

}  // namespace vllm
