// How `vllm-cpp serve|generate|chat|bench ... -tp N` (or -pp N) becomes N ranks. On one host the
// command starts them itself: it re-executes its own command line under `mpirun -np N` (bound one
// rank per NUMA node with --bind-to numa when the host has N of them, else --bind-to none), and
// each rank finds itself in OMPI_COMM_WORLD_*; across hosts the user runs `mpirun -H a,b -np N
// vllm-cpp serve ... -tp N`, which is detected the same way and not relaunched. Rank 0 runs the
// command (the server, the prompts) and its engine joins the job; the other ranks run their shard
// of each step (engine/tensor_parallel_worker.h).
#pragma once

#include <optional>

#include "vllm/engine_args.h"

namespace vllm {

// Call in an engine command's callback once `args` is complete, before the engine is made.
// nullopt: go on (-tp 1, or rank 0 of the job). Otherwise the exit code the command must end
// with: a worker rank's after rank 0 stopped it, or 1 after an error (written to stderr). When
// mpirun has to be started this does not return (the process becomes mpirun) unless it cannot.
// Without -t, each rank takes its share of the host's CPUs (CPUs / ranks on the host).
std::optional<int> RunTensorParallelRanks(EngineArgs* args);

}  // namespace vllm
