#include "hub/repo_files.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <regex>

#include "hub/ascii_lower.h"

namespace vllm::hub {
namespace {

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool IsGguf(const std::string& file) {
  return AsciiLower(file).ends_with(".gguf") && AsciiLower(BaseName(file)).rfind("mmproj", 0) != 0;
}

// The text a sharded set's files share ("model-Q4_K_M" of "model-Q4_K_M-00001-of-00003.gguf"),
// or the file itself when it is no shard.
std::string ShardSetName(const std::string& file) {
  static const std::regex kShard("^(.*)-[0-9]{5}-of-[0-9]{5}\\.gguf$", std::regex::icase);
  std::smatch match;
  return std::regex_match(file, match, kShard) ? match[1].str() : file;
}

// `tag` occurs in `name` (both lowercase) after the start or a non-alphanumeric character and
// before the end or a '-' or '.'.
bool CarriesTag(const std::string& name, const std::string& tag) {
  for (size_t at = name.find(tag); at != std::string::npos; at = name.find(tag, at + 1)) {
    const bool starts = at == 0 || !std::isalnum(static_cast<unsigned char>(name[at - 1]));
    const size_t end = at + tag.size();
    const bool ends = end == name.size() || name[end] == '-' || name[end] == '.';
    if (starts && ends) return true;
  }
  return false;
}

bool IsCheckpointFile(const std::string& file, RepoPart part) {
  if (file.find('/') != std::string::npos) return false;  // top level only
  const std::string name = AsciiLower(file);
  static const char* const kTokenizerFiles[] = {"tokenizer.model", "merges.txt", "vocab.txt",
                                                "chat_template.jinja", "tekken.json"};
  for (const char* tokenizer_file : kTokenizerFiles) {
    if (name == tokenizer_file) return true;
  }
  if (name.ends_with(".jinja") || name.ends_with(".tiktoken")) return true;
  if (part == RepoPart::kTokenizer) {
    return name.ends_with(".json") &&
           (name.rfind("tokenizer", 0) == 0 || name == "special_tokens_map.json" ||
            name == "added_tokens.json" || name == "vocab.json" || name == "config.json" ||
            name == "generation_config.json");
  }
  return name.ends_with(".json") || name.ends_with(".safetensors");
}

}  // namespace

bool IsSafetensorsRepo(const std::vector<std::string>& files) {
  const bool has_config = std::find(files.begin(), files.end(), "config.json") != files.end();
  return has_config && std::any_of(files.begin(), files.end(), [](const std::string& file) {
           return file.find('/') == std::string::npos && file.ends_with(".safetensors");
         });
}

Expected<std::vector<std::string>> SelectCheckpointFiles(const std::vector<std::string>& files,
                                                         RepoPart part, const std::string& repo) {
  const bool has_model_safetensors =
      std::any_of(files.begin(), files.end(), [](const std::string& file) {
        return file.rfind("model", 0) == 0 && file.ends_with(".safetensors");
      });
  std::vector<std::string> selected;
  bool has_config = false;
  bool has_weights = false;
  for (const std::string& file : files) {
    if (!IsCheckpointFile(file, part)) continue;
    if (file == "config.json") {
      has_config = true;
      continue;
    }
    if (file.ends_with(".safetensors")) {
      if (has_model_safetensors && file.rfind("consolidated", 0) == 0) continue;
      has_weights = true;
    }
    selected.push_back(file);
  }
  if (part == RepoPart::kModel && !has_weights) {
    return Error{repo +
                 " has no safetensors or GGUF weights (vllm-cpp does not load .bin, .pt, "
                 ".h5 or ONNX weights)"};
  }
  if (part == RepoPart::kModel && !has_config) return Error{repo + " has no config.json"};
  if (has_config) selected.push_back("config.json");
  return selected;
}

Expected<std::string> ChooseGgufFile(const std::vector<std::string>& files, const std::string& tag,
                                     const std::string& repo) {
  // Candidates: single files and sharded sets, each by its set name.
  std::vector<std::string> candidates;
  std::vector<std::string> first_files;
  for (const std::string& file : files) {
    if (!IsGguf(file)) continue;
    std::string set = ShardSetName(file);
    auto known = std::find(candidates.begin(), candidates.end(), set);
    if (known == candidates.end()) {
      candidates.push_back(set);
      first_files.push_back(file);
    } else if (file < first_files[known - candidates.begin()]) {
      first_files[known - candidates.begin()] = file;
    }
  }
  if (candidates.empty()) return Error{repo + " has no GGUF file and no safetensors weights"};
  auto list = [&] {
    std::string names;
    for (const std::string& file : first_files) names += (names.empty() ? "" : ", ") + file;
    return names;
  };
  std::vector<size_t> matches;
  const std::string wanted = AsciiLower(tag.empty() ? "Q4_K_M" : tag);
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (CarriesTag(AsciiLower(BaseName(candidates[i])), wanted)) matches.push_back(i);
  }
  if (tag.empty() && candidates.size() == 1) matches = {0};
  if (matches.empty()) {
    return Error{tag.empty() ? repo + " has several GGUF files: pick one with " + repo +
                                   ":TAG (e.g. :Q8_0) or " + repo + "/FILE.gguf (" + list() + ")"
                             : "no GGUF file of " + repo + " matches the tag '" + tag + "' (" +
                                   list() + ")"};
  }
  if (matches.size() > 1) {
    std::string names;
    for (size_t i : matches) names += (names.empty() ? "" : ", ") + first_files[i];
    return Error{"the tag '" + (tag.empty() ? std::string("Q4_K_M") : tag) +
                 "' matches several GGUF files of " + repo + " (" + names + "): name one with " +
                 repo + "/FILE.gguf"};
  }
  return first_files[matches[0]];
}

Expected<std::vector<std::string>> GgufSetFiles(const std::vector<std::string>& files,
                                                const std::string& chosen,
                                                const std::string& repo) {
  static const std::regex kShard("^(.*)-([0-9]{5})-of-([0-9]{5})\\.gguf$", std::regex::icase);
  std::smatch match;
  if (!std::regex_match(chosen, match, kShard)) return std::vector<std::string>{chosen};
  const std::string count = match[3].str();
  if (match[2].str() != "00001") {
    return Error{chosen + " of " + repo + " is one shard of a split GGUF: name its first, " +
                 match[1].str() + "-00001-of-" + count + ".gguf"};
  }
  std::vector<std::string> shards;
  for (int index = 1; index <= std::stoi(count); ++index) {
    char number[12];  // room for any int; a shard number has 5 digits (kShard)
    std::snprintf(number, sizeof(number), "%05d", index);
    const std::string shard = match[1].str() + "-" + number + "-of-" + count + ".gguf";
    if (std::find(files.begin(), files.end(), shard) == files.end()) {
      return Error{"shard " + shard + " of the split GGUF " + chosen + " is not in " + repo};
    }
    shards.push_back(shard);
  }
  return shards;
}

}  // namespace vllm::hub
