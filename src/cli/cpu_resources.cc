#include "cli/cpu_resources.h"

#include <sched.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string_view>
#include <vector>

#include "common/logging.h"
#include "dist/mpi_world.h"
#include "engine/tensor_parallel_step.h"

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

// The CPUs of one list such as "0-3,8"; `where` starts its errors.
Expected<std::set<int>> CpusInList(std::string_view list, const std::string& where) {
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
  return cpus;
}

// One list per rank: this rank's CPUs pinned and counted as its threads (unless -t is given).
Status ApplyRankCpuLists(const std::string& bind, bool threads_given, EngineArgs* args) {
  const std::string where = "VLLM_CPU_OMP_THREADS_BIND='" + bind + "': ";
  std::vector<std::set<int>> rank_cpus;
  for (size_t start = 0;;) {
    const size_t bar = bind.find('|', start);
    auto cpus = CpusInList(std::string_view(bind).substr(start, bar - start), where);
    if (!cpus) return Error{cpus.error()};
    rank_cpus.push_back(std::move(*cpus));
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  if (static_cast<int>(rank_cpus.size()) != NumModelRanks(*args)) {
    return Error{where + std::to_string(rank_cpus.size()) +
                 " CPU lists ('|' separates one per rank) for " + ParallelSizeFlag(*args)};
  }
  auto world = dist::MpiWorldFromEnvironment();
  if (!world) return Error{world.error()};
  if (!world->has_value()) return Status::Ok();  // each rank applies its list once started
  const int rank = (*world)->rank;
  const std::set<int>& cpus = rank_cpus[rank];
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu >= CPU_SETSIZE) return Error{where + "CPU " + std::to_string(cpu) + " is too large"};
    CPU_SET(cpu, &set);
  }
  if (::sched_setaffinity(0, sizeof(set), &set) != 0) {
    return Error{where + "cannot pin rank " + std::to_string(rank) + ": " + std::strerror(errno)};
  }
  if (!threads_given) args->num_threads = static_cast<int>(cpus.size());
  VLLM_LOG(kInfo) << ParallelismName(*args) << " rank " << rank << ": pinned to " << cpus.size()
                  << " CPUs (VLLM_CPU_OMP_THREADS_BIND's list " << rank << ")";
  return Status::Ok();
}

}  // namespace

Expected<int> CountCpusInList(const std::string& list) {
  const std::string where = "VLLM_CPU_OMP_THREADS_BIND='" + list + "': ";
  if (list.find('|') != std::string::npos) {
    return Error{where + "one CPU list per rank needs tensor or pipeline parallelism (-tp, -pp)"};
  }
  auto cpus = CpusInList(list, where);
  if (!cpus) return Error{cpus.error()};
  return static_cast<int>(cpus->size());
}

Status ApplyThreadsBind(bool threads_given, EngineArgs* args) {
  const char* threads_bind = std::getenv("VLLM_CPU_OMP_THREADS_BIND");
  if (threads_bind == nullptr) return Status::Ok();
  const std::string bind = threads_bind;
  if (bind.find('|') != std::string::npos) return ApplyRankCpuLists(bind, threads_given, args);
  if (!threads_given) {
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
