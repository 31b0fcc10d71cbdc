#include "cli/parallelism_flags.h"

#include <string>

namespace vllm {
namespace {

// A size flag whose only value here is 1; another stops the command with `reason`.
void AddRefusedSize(CLI::App& command, const std::string& name, const std::string& reason) {
  command
      .add_option_function<int>(
          name,
          [name, reason](int size) {
            if (size != 1) {
              throw CLI::ValidationError(name + " " + std::to_string(size) + ": " + reason);
            }
          },
          "1 only: " + reason)
      ->default_str("1");
}

}  // namespace

void AddParallelismOptions(CLI::App& command, EngineArgs& args) {
  command
      .add_option("--tensor-parallel-size", args.tensor_parallel_size,
                  "-tp: the MPI ranks the model is split across (1 to 64), started on this host "
                  "with Open MPI, or run under mpirun -H host1,host2 -np N across hosts")
      ->capture_default_str();
  command
      .add_option("--pipeline-parallel-size", args.pipeline_parallel_size,
                  "-pp: the stages (MPI ranks) the model's layers are split across (1 to 64), "
                  "started as -tp's ranks are; with -tp, tp x pp ranks")
      ->capture_default_str();
  AddRefusedSize(command, "--data-parallel-size",
                 "data parallelism is not implemented yet (issue 46)");
}

}  // namespace vllm
