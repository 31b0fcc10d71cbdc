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

Expected<PoolingType> PoolingTypeFromGguf(int64_t value) {
  switch (value) {
    case 0:
      return PoolingType::kAll;
    case 1:
      return PoolingType::kMean;
    case 2:
    case 4:
      return PoolingType::kCls;
    case 3:
      return PoolingType::kLast;
    default:
      return Error{"unsupported pooling_type " + std::to_string(value) +
                   " (supported: 0 none, 1 mean, 2 cls, 3 last, 4 rank)"};
  }
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

}  // namespace vllm
