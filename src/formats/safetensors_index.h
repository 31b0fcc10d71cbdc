// A Hugging Face safetensors checkpoint directory: either one model.safetensors, or shards named
// by model.safetensors.index.json, whose "weight_map" maps each tensor name to its shard's file
// name. Every shard is opened (mmap'd) once; tensors are looked up across all of them.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "formats/safetensors_file.h"

namespace vllm {

class SafetensorsModel {
 public:
  static constexpr const char* kSingleFileName = "model.safetensors";
  static constexpr const char* kIndexFileName = "model.safetensors.index.json";

  // Opens model.safetensors when present, else the shards of model.safetensors.index.json. Errors:
  // neither file, a bad index, a shard path outside `dir` (absolute or with ".."), a weight_map
  // entry whose shard lacks the tensor, a tensor in two shards, or any damaged shard.
  static Expected<std::unique_ptr<SafetensorsModel>> OpenDirectory(const std::string& dir);

  const SafetensorsTensor* FindTensor(std::string_view name) const;
  // Every tensor of every shard: shards in file-name order, each shard's tensors in data order.
  // Tensors a shard holds beyond what the weight_map names are included.
  const std::vector<const SafetensorsTensor*>& tensors() const { return tensors_; }
  // The opened shards, in file-name order.
  const std::vector<std::unique_ptr<SafetensorsFile>>& shards() const { return shards_; }

 private:
  SafetensorsModel() = default;
  std::vector<std::unique_ptr<SafetensorsFile>> shards_;
  std::vector<const SafetensorsTensor*> tensors_;
  std::map<std::string, const SafetensorsTensor*, std::less<>> tensor_index_;
};

}  // namespace vllm
