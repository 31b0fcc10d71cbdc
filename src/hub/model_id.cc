#include "hub/model_id.h"

#include <cctype>
#include <vector>

namespace vllm::hub {
namespace {

bool EndsWithGguf(const std::string& text) {
  if (text.size() < 5) return false;
  std::string suffix = text.substr(text.size() - 5);
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return suffix == ".gguf";
}

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// An org or repo name as the hub allows it.
bool IsRepoName(const std::string& name) {
  if (name.empty() || name.size() > 96) return false;
  if (!std::isalnum(static_cast<unsigned char>(name.front()))) return false;
  for (char c : name) {
    if (!IsNameChar(c)) return false;
  }
  return name.find("--") == std::string::npos && name.find("..") == std::string::npos;
}

// A file path inside a repo: segments of name characters, none "." or "..".
bool IsRepoFilePath(const std::vector<std::string>& segments) {
  for (const std::string& segment : segments) {
    if (segment.empty() || segment == "." || segment == "..") return false;
    for (char c : segment) {
      if (!IsNameChar(c)) return false;
    }
  }
  return true;
}

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

std::optional<ModelId> ParseModelId(const std::string& text) {
  std::vector<std::string> segments = Split(text, '/');
  if (segments.size() < 2) return std::nullopt;
  ModelId id;
  std::string name = segments[1];
  if (segments.size() == 2) {
    if (size_t colon = name.find(':'); colon != std::string::npos) {
      id.gguf_tag = name.substr(colon + 1);
      name.resize(colon);
      if (id.gguf_tag.empty()) return std::nullopt;
      for (char c : id.gguf_tag) {
        if (!IsNameChar(c)) return std::nullopt;
      }
    } else if (EndsWithGguf(name)) {
      return std::nullopt;
    }
  } else {
    std::vector<std::string> file(segments.begin() + 2, segments.end());
    if (!IsRepoFilePath(file) || !EndsWithGguf(text)) return std::nullopt;
    id.gguf_file = text.substr(segments[0].size() + segments[1].size() + 2);
  }
  if (!IsRepoName(segments[0]) || !IsRepoName(name)) return std::nullopt;
  id.repo = segments[0] + "/" + name;
  return id;
}

}  // namespace vllm::hub
