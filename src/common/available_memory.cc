#include "common/available_memory.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace vllm {
namespace {

std::optional<int64_t> ParseInt64(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  return value;
}

// The number a file such as a cgroup's memory.max holds; nullopt when the file is absent or holds
// no number ("max": no limit).
std::optional<int64_t> ReadNumberFile(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::string text;
  if (!(file >> text)) return std::nullopt;
  return ParseInt64(text);
}

// The value of `key` in a "key value [kB]" file (/proc/meminfo, a cgroup's memory.stat), times
// `unit_bytes`.
std::optional<int64_t> ReadKeyedValue(const std::filesystem::path& path, std::string_view key,
                                      int64_t unit_bytes) {
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream fields(line);
    std::string name, value;
    if (!(fields >> name >> value)) continue;
    if (name.ends_with(':')) name.pop_back();
    if (name != key) continue;
    std::optional<int64_t> number = ParseInt64(value);
    if (!number) return std::nullopt;
    return *number * unit_bytes;
  }
  return std::nullopt;
}

// The files of a memory cgroup directory (v2 or v1) that CgroupHeadroom reads.
struct CgroupMemoryFiles {
  const char* limit;
  const char* usage;
  const char* inactive_file_key;  // in memory.stat
};

// What a memory cgroup directory lets its processes still allocate: its limit less its usage,
// not counting inactive file pages (reclaimed first). nullopt when it has no limit file.
std::optional<int64_t> CgroupHeadroom(const std::filesystem::path& dir,
                                      const CgroupMemoryFiles& files) {
  std::optional<int64_t> limit = ReadNumberFile(dir / files.limit);
  std::optional<int64_t> usage = ReadNumberFile(dir / files.usage);
  if (!limit || !usage) return std::nullopt;
  const int64_t inactive_file =
      ReadKeyedValue(dir / "memory.stat", files.inactive_file_key, 1).value_or(0);
  return *limit - std::max<int64_t>(0, *usage - inactive_file);
}

}  // namespace

std::optional<int64_t> AvailableMemoryBytes() {
  std::optional<int64_t> available = ReadKeyedValue("/proc/meminfo", "MemAvailable", 1024);
  if (!available) return std::nullopt;
  // Lines "hierarchy-id:controllers:path"; v2 has empty controllers, v1 lists "memory".
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroups, line)) {
    const size_t first_colon = line.find(':');
    const size_t second_colon = line.find(':', first_colon + 1);
    if (first_colon == std::string::npos || second_colon == std::string::npos) continue;
    const std::string controllers = line.substr(first_colon + 1, second_colon - first_colon - 1);
    std::filesystem::path mount;
    CgroupMemoryFiles files;
    if (controllers.empty()) {
      mount = "/sys/fs/cgroup";
      files = {"memory.max", "memory.current", "inactive_file"};
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      mount = "/sys/fs/cgroup/memory";
      files = {"memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"};
    } else {
      continue;
    }
    // The process's cgroup and its ancestors up to the mount (in a container the mount itself
    // may be the process's cgroup, its path then absent below it).
    std::vector<std::filesystem::path> dirs = {mount};
    for (const auto& part : std::filesystem::path(line.substr(second_colon + 1)).relative_path()) {
      if (!part.empty()) dirs.push_back(dirs.back() / part);
    }
    for (const auto& dir : dirs) {
      if (std::optional<int64_t> headroom = CgroupHeadroom(dir, files)) {
        available = std::min(*available, *headroom);
      }
    }
  }
  return available;
}

}  // namespace vllm
