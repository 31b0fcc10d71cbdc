#include "cli/tensor_parallel_launch.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "common/logging.h"
#include "dist/mpi_world.h"
#include "engine/engine_args_check.h"
#include "engine/tensor_parallel_step.h"
#include "engine/tensor_parallel_worker.h"

namespace vllm {
namespace {

// The host's NUMA nodes (Linux sysfs); 1 when it cannot tell.
int NumNumaNodes() {
  std::error_code error;
  int nodes = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/devices/system/node", error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.starts_with("node") &&
        std::all_of(name.begin() + 4, name.end(), ::isdigit)) {
      ++nodes;
    }
  }
  return std::max(nodes, 1);
}

// This process's command line as it was started (argv[0] included).
std::vector<std::string> OwnCommandLine() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  size_t start = 0;
  for (size_t end; (end = text.find('\0', start)) != std::string::npos; start = end + 1) {
    args.push_back(text.substr(start, end - start));
  }
  return args;
}

// Becomes `mpirun -np N ... <this binary> <this command line>`; returns only when it cannot.
// `parallelism`: "tensor parallel" or "pipeline parallel", for the messages.
int RelaunchUnderMpirun(int num_ranks, const std::string& parallelism) {
  const std::vector<std::string> own = OwnCommandLine();
  std::error_code error;
  const std::filesystem::path binary = std::filesystem::read_symlink("/proc/self/exe", error);
  if (own.empty() || error) {
    std::cerr << "error: " << parallelism << ": cannot read this process's command line\n";
    return 1;
  }
  std::vector<std::string> command = {"mpirun", "-np", std::to_string(num_ranks),
                                      "--oversubscribe"};
  // Ranks given CPU lists pin themselves (cli/cpu_resources.h).
  const char* cpu_lists = std::getenv("VLLM_CPU_OMP_THREADS_BIND");
  const bool ranks_pin_themselves = cpu_lists != nullptr && std::strchr(cpu_lists, '|') != nullptr;
  if (NumNumaNodes() == num_ranks && !ranks_pin_themselves) {
    command.insert(command.end(), {"--bind-to", "numa", "--map-by", "numa"});
  } else {
    command.insert(command.end(), {"--bind-to", "none"});
  }
  command.push_back(binary.string());
  command.insert(command.end(), own.begin() + 1, own.end());
  // Open MPI refuses to run as root unless told; containers and CI run as root.
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  std::string joined;
  for (const std::string& arg : command) joined += (joined.empty() ? "" : " ") + arg;
  VLLM_LOG(kInfo) << parallelism << ": starting " << num_ranks << " ranks: " << joined;
  std::vector<char*> argv;
  for (std::string& arg : command) argv.push_back(arg.data());
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::cerr << "error: " << parallelism << ": cannot run mpirun (" << std::strerror(errno)
            << "): install Open MPI (openmpi-bin, as scripts/setup.sh does)\n";
  return 1;
}

}  // namespace

std::optional<int> RunTensorParallelRanks(EngineArgs* args) {
  auto world = dist::MpiWorldFromEnvironment();
  if (!world) {
    std::cerr << "error: " << world.error() << "\n";
    return 1;
  }
  const int num_ranks = NumModelRanks(*args);
  if (num_ranks == 1) {
    if (world->has_value() && (*world)->size > 1) {
      std::cerr << "error: mpirun started " << (*world)->size << " ranks; give -tp "
                << (*world)->size << " (or -pp " << (*world)->size
                << ") to split the model across them\n";
      return 1;
    }
    return std::nullopt;
  }
  if (Status checked = CheckEngineArgs(*args); !checked.ok()) {
    std::cerr << "error: " << checked.message() << "\n";
    return 1;
  }
  if (!world->has_value()) return RelaunchUnderMpirun(num_ranks, ParallelismName(*args));
  const dist::MpiWorld& job = **world;
  if (job.size != num_ranks) {
    std::cerr << "error: " << ParallelSizeFlag(*args) << " needs " << num_ranks
              << " MPI ranks; mpirun started " << job.size << "\n";
    return 1;
  }
  if (args->num_threads == 0) {
    const int cpus = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    args->num_threads = std::max(1, cpus / job.local_size);
  }
  if (job.rank == 0) return std::nullopt;
  // Rank 0 stops the workers (mpirun passes Ctrl-C and SIGTERM to every rank).
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
  if (Status worker = RunTensorParallelWorker(*args); !worker.ok()) {
    std::cerr << "error: " << ParallelismName(*args) << " rank " << job.rank << ": "
              << worker.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace vllm
