#include "cli/cpu_resources.h"

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "common/logging.h"

namespace vllm {
namespace {

// The bytes of a model's weight files: the GGUF file, or a directory's safetensors.
int64_t WeightFileBytes(const std::string& model) {
  std::error_code error;
  if (std::filesystem::is_regular_file(model, error)) {
    return static_cast<int64_t>(std::filesystem::file_size(model, error));
  }
  int64_t bytes = 0;
  if (!std::filesystem::is_directory(model, error)) return 0;
  for (const auto& entry : std::filesystem::directory_iterator(model, error)) {
    if (entry.path().extension() == ".safetensors") {
      bytes += static_cast<int64_t>(entry.file_size(error));
    }
  }
  return bytes;
}

Expected<int> ParseCpu(std::string_view text) {
  int cpu = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), cpu);
  if (error != std::errc() || end != text.data() + text.size() || cpu < 0) {
    return Error{"not a CPU number: '" + std::string(text) + "'"};
  }
  return cpu;
}

}  // namespace

Expected<int> CountCpusInList(const std::string& list) {
  const std::string where = "VLLM_CPU_OMP_THREADS_BIND='" + list + "': ";
  if (list.find('|') != std::string::npos) {
    return Error{where +
                 "one CPU list per rank needs tensor parallelism, which is not available "
                 "in this build yet (issue 46)"};
  }
  std::set<int> cpus;
  std::string_view rest = list;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view range = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t dash = range.find('-');
    auto first = ParseCpu(range.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : ParseCpu(range.substr(dash + 1));
    if (!first || !last || *last < *first || *last - *first > 65536) {
      return Error{where + "expected CPU numbers and ranges such as 0-3,8"};
    }
    for (int cpu = *first; cpu <= *last; ++cpu) cpus.insert(cpu);
  }
  if (cpus.empty()) return Error{where + "names no CPU"};
  return static_cast<int>(cpus.size());
}

Status ApplyCpuResources(const CpuResourceFlags& flags, EngineArgs* args) {
  if (flags.gpu_memory_utilization &&
      !(*flags.gpu_memory_utilization > 0 && *flags.gpu_memory_utilization <= 1)) {
    return Error{"--gpu-memory-utilization must be greater than 0 and at most 1, got " +
                 std::to_string(*flags.gpu_memory_utilization)};
  }
  const char* kv_cache_space = std::getenv("VLLM_CPU_KVCACHE_SPACE");
  if (kv_cache_space != nullptr && *kv_cache_space != '\0' && !flags.kv_cache_memory_bytes_given) {
    char* end = nullptr;
    const double gib = std::strtod(kv_cache_space, &end);
    if (*end != '\0' || !(gib >= 0)) {
      return Error{"VLLM_CPU_KVCACHE_SPACE must be a number of GiB, got '" +
                   std::string(kv_cache_space) + "'"};
    }
    if (gib > 0) args->kv_cache_memory_bytes = static_cast<int64_t>(gib * (int64_t{1} << 30));
  } else if (flags.gpu_memory_utilization && !flags.kv_cache_memory_bytes_given) {
    if (!flags.available_memory_bytes) {
      return Error{
          "--gpu-memory-utilization: the available memory cannot be read; give "
          "--kv-cache-memory-bytes"};
    }
    const int64_t usable = *flags.available_memory_bytes - WeightFileBytes(args->model);
    args->kv_cache_memory_bytes =
        static_cast<int64_t>(*flags.gpu_memory_utilization * static_cast<double>(usable));
    if (args->kv_cache_memory_bytes <= 0) {
      return Error{
          "--gpu-memory-utilization: no memory is left for the KV cache next to the "
          "model's weights"};
    }
  }
  const char* threads_bind = std::getenv("VLLM_CPU_OMP_THREADS_BIND");
  if (threads_bind != nullptr && !flags.threads_given) {
    const std::string bind = threads_bind;
    if (bind.empty() || bind == "auto" || bind == "all" || bind == "nobind") return Status::Ok();
    auto num_cpus = CountCpusInList(bind);
    if (!num_cpus) return Error{num_cpus.error()};
    args->num_threads = *num_cpus;
    VLLM_LOG(kWarning) << "VLLM_CPU_OMP_THREADS_BIND=" << bind << ": " << *num_cpus
                       << " threads, not pinned to those CPUs (this build does not pin threads)";
  }
  return Status::Ok();
}

}  // namespace vllm
