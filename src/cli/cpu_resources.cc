#include "cli/cpu_resources.h"

#include <charconv>
#include <cstdlib>
#include <set>

#include "common/logging.h"

namespace vllm {
namespace {

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

Status ApplyThreadsBind(bool threads_given, EngineArgs* args) {
  const char* threads_bind = std::getenv("VLLM_CPU_OMP_THREADS_BIND");
  if (threads_bind != nullptr && !threads_given) {
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
