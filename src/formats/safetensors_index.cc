// Resolves a safetensors checkpoint directory into its shards and checks the index against them.
#include "formats/safetensors_index.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "common/mapped_file.h"

namespace vllm {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Reads the weight_map of an index file: tensor name -> shard path relative to the directory,
// normalized so that "./a" and "a" name one shard.
Expected<std::map<std::string, std::string>> ReadWeightMap(const fs::path& index_path) {
  const std::string where = index_path.string() + ": ";
  auto mapped = MappedFile::Open(index_path.string());
  if (!mapped) return Error{mapped.error()};
  const char* text = reinterpret_cast<const char*>((*mapped)->data());
  Json index;
  try {
    index = Json::parse(text, text + (*mapped)->size());
  } catch (const Json::exception& e) {
    return Error{where + "not valid JSON: " + e.what()};
  }
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    return Error{where + "no \"weight_map\" object"};
  }
  std::map<std::string, std::string> weight_map;
  for (const auto& [name, shard_json] : index["weight_map"].items()) {
    if (!shard_json.is_string()) return Error{where + "weight_map['" + name + "'] is not a string"};
    fs::path shard(shard_json.get<std::string>());
    bool escapes = shard.empty() || shard.is_absolute();
    for (const auto& part : shard) escapes = escapes || part == "..";
    if (escapes) {
      return Error{where + "weight_map['" + name + "'] = '" + shard.string() +
                   "' is not a path inside the directory"};
    }
    weight_map.emplace(name, shard.lexically_normal().string());
  }
  return weight_map;
}

}  // namespace

Expected<std::unique_ptr<SafetensorsModel>> SafetensorsModel::OpenDirectory(
    const std::string& dir) {
  const fs::path root(dir);
  std::error_code ec;
  std::map<std::string, std::string> weight_map;  // empty for a single file
  std::vector<std::string> shard_names;           // sorted, distinct
  if (fs::exists(root / kSingleFileName, ec)) {
    shard_names.push_back(kSingleFileName);
  } else if (fs::exists(root / kIndexFileName, ec)) {
    auto read = ReadWeightMap(root / kIndexFileName);
    if (!read) return Error{read.error()};
    weight_map = std::move(*read);
    std::set<std::string> distinct;
    for (const auto& [name, shard] : weight_map) distinct.insert(shard);
    shard_names.assign(distinct.begin(), distinct.end());
  } else {
    return Error{"'" + dir + "' has neither " + kSingleFileName + " nor " + kIndexFileName};
  }

  std::unique_ptr<SafetensorsModel> model(new SafetensorsModel());
  std::map<std::string, const SafetensorsFile*> shard_by_name;
  for (const auto& shard_name : shard_names) {
    auto shard = SafetensorsFile::Open((root / shard_name).string());
    if (!shard) return Error{shard.error()};
    for (const auto& tensor : (*shard)->tensors()) {
      if (!model->tensor_index_.emplace(tensor.name, &tensor).second) {
        for (const auto& [other_name, other] : shard_by_name) {
          if (other->FindTensor(tensor.name) == nullptr) continue;
          return Error{"tensor '" + tensor.name + "' is in both '" + other_name + "' and '" +
                       shard_name + "'"};
        }
      }
      model->tensors_.push_back(&tensor);
    }
    shard_by_name.emplace(shard_name, shard->get());
    model->shards_.push_back(std::move(*shard));
  }
  for (const auto& [name, shard] : weight_map) {
    if (shard_by_name.at(shard)->FindTensor(name) == nullptr) {
      return Error{std::string(kIndexFileName) + " maps tensor '" + name + "' to '" + shard +
                   "', which lacks it"};
    }
  }
  return model;
}

const SafetensorsTensor* SafetensorsModel::FindTensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : it->second;
}

}  // namespace vllm
