#include "formats/gguf_split_set.h"

#include <cstdio>
#include <filesystem>
#include <regex>

namespace vllm {
namespace {

// split.no and split.count, (0, 1) when absent: a file that is no shard.
Status ReadSplitKeys(const GgufFile& file, const std::string& path, int64_t* number,
                     int64_t* count) {
  auto no = file.GetInt("split.no");
  auto total = file.GetInt("split.count");
  if (!no) return Error{path + ": " + no.error()};
  if (!total) return Error{path + ": " + total.error()};
  *number = no->value_or(0);
  *count = total->value_or(1);
  if (*count < 1 || *count > 99999 || *number < 0 || *number >= *count) {
    return Error{path + ": bad split.no " + std::to_string(*number) + " / split.count " +
                 std::to_string(*count)};
  }
  return Status::Ok();
}

}  // namespace

std::optional<GgufSplitName> ParseGgufSplitPath(const std::string& path) {
  static const std::regex kShard("^(.*)-([0-9]{5})-of-([0-9]{5})\\.gguf$");
  std::smatch match;
  if (!std::regex_match(path, match, kShard)) return std::nullopt;
  return GgufSplitName{match[1].str(), std::stoi(match[2].str()), std::stoi(match[3].str())};
}

std::string GgufSplitPath(const std::string& prefix, int index, int count) {
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "-%05d-of-%05d.gguf", index, count);
  return prefix + suffix;
}

Expected<std::unique_ptr<GgufFile>> OpenGgufSplitSet(const std::string& path) {
  auto first = GgufFile::Open(path);
  if (!first) return Error{first.error()};
  int64_t number = 0;
  int64_t count = 1;
  VLLM_RETURN_IF_ERROR(ReadSplitKeys(**first, path, &number, &count));
  if (count == 1) return first;
  const std::optional<GgufSplitName> name = ParseGgufSplitPath(path);
  if (number != 0) {
    return Error{path + " is shard " + std::to_string(number + 1) + " of " + std::to_string(count) +
                 " of a split model: give its first shard" +
                 (name ? ", " + GgufSplitPath(name->prefix, 1, name->count) : std::string())};
  }
  if (!name || name->count != count) {
    return Error{path + " is the first of " + std::to_string(count) +
                 " shards, but its name does not end in " +
                 GgufSplitPath("", 1, static_cast<int>(count)) +
                 ", which is how the other shards are found"};
  }
  for (int index = 2; index <= count; ++index) {
    const std::string shard_path = GgufSplitPath(name->prefix, index, static_cast<int>(count));
    std::error_code error;
    if (!std::filesystem::exists(shard_path, error)) {
      return Error{"shard " + std::to_string(index) + " of " + std::to_string(count) + " of " +
                   path + " is missing: " + shard_path};
    }
    auto shard = GgufFile::Open(shard_path);
    if (!shard) return Error{shard.error()};
    int64_t shard_number = 0;
    int64_t shard_count = 1;
    VLLM_RETURN_IF_ERROR(ReadSplitKeys(**shard, shard_path, &shard_number, &shard_count));
    if (shard_number != index - 1 || shard_count != count) {
      return Error{shard_path + " says it is shard " + std::to_string(shard_number + 1) + " of " +
                   std::to_string(shard_count) + ", not " + std::to_string(index) + " of " +
                   std::to_string(count)};
    }
    Status adopted = (*first)->AdoptShardTensors(std::move(*shard));
    if (!adopted.ok()) return Error{shard_path + ": " + adopted.message()};
  }
  auto total = (*first)->GetInt("split.tensors.count");
  if (!total) return Error{path + ": " + total.error()};
  if (*total && **total != static_cast<int64_t>((*first)->tensors().size())) {
    return Error{path + ": split.tensors.count is " + std::to_string(**total) + ", but its " +
                 std::to_string(count) + " shards hold " +
                 std::to_string((*first)->tensors().size()) + " tensors"};
  }
  return first;
}

}  // namespace vllm
