#include "model/kv_storage.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace vllm {
namespace {

constexpr size_t kSmallestPageBytes = 4096;

std::string FormatBytes(int64_t bytes) {
  char text[32];
  if (bytes >= int64_t{1} << 30) {
    std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  } else {
    std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  }
  return text;
}

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

// Bytes this process can still make resident: /proc/meminfo's MemAvailable, capped by the
// headroom of its memory cgroup and every ancestor (cgroup v2 memory.max / memory.current, or v1
// memory.limit_in_bytes / memory.usage_in_bytes). nullopt where /proc/meminfo is unreadable.
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

}  // namespace

void KvStorage::Unmap::operator()(float* p) const { ::munmap(p, bytes); }

KvStorage::KvStorage(const Options& options, std::unique_ptr<float, Unmap> memory)
    : options_(options),
      memory_(std::move(memory)),
      values_(memory_.get() + memory_.get_deleter().bytes / 2 / sizeof(float)) {}

int64_t KvStorage::BytesPerToken(const Options& options) {
  return 2 * options.num_layers * options.num_kv_heads * options.head_dim *
         static_cast<int64_t>(sizeof(float));
}

Expected<std::unique_ptr<KvStorage>> KvStorage::Create(const Options& options) {
  if (options.num_layers <= 0 || options.num_blocks <= 0 || options.block_size <= 0 ||
      options.num_kv_heads <= 0 || options.head_dim <= 0) {
    return Error{"KV storage: every dimension must be positive"};
  }
  int64_t num_slots = 0;
  int64_t bytes = 0;
  if (__builtin_mul_overflow(options.num_blocks, options.block_size, &num_slots) ||
      __builtin_mul_overflow(num_slots, BytesPerToken(options), &bytes)) {
    return Error{"KV storage: its size in bytes overflows"};
  }
  if (std::optional<int64_t> available = AvailableMemoryBytes(); available && bytes > *available) {
    return Error{"--kv-cache-memory-bytes: a KV cache of " + FormatBytes(bytes) +
                 " does not fit: " + FormatBytes(*available) +
                 " of memory is available; lower --kv-cache-memory-bytes"};
  }
  const size_t size = static_cast<size_t>(bytes);
  void* memory = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    return Error{"--kv-cache-memory-bytes: cannot reserve " + FormatBytes(bytes) +
                 " for the KV cache (" + std::strerror(errno) + "); lower --kv-cache-memory-bytes"};
  }
  std::unique_ptr<float, Unmap> owned(static_cast<float*>(memory), Unmap{size});
  // Huge pages where the kernel allows them on request: 512 times fewer page faults to make the
  // cache resident, and fewer TLB misses when attention reads it. Advice only.
  ::madvise(memory, size, MADV_HUGEPAGE);
  // Writing one byte per page makes every page resident (zeros, as mmap gives them).
  for (size_t offset = 0; offset < size; offset += kSmallestPageBytes) {
    static_cast<volatile char*>(memory)[offset] = 0;
  }
  return std::unique_ptr<KvStorage>(new KvStorage(options, std::move(owned)));
}

}  // namespace vllm
