// vLLM's parallelism flags on every engine command (serve, generate, chat, bench): -tp /
// --tensor-parallel-size into EngineArgs::tensor_parallel_size; -pp / --pipeline-parallel-size and
// -dp / --data-parallel-size accepted as 1 only, with the reason for any other value. (main turns
// vLLM's -tp 2 into --tensor-parallel-size 2 before CLI11, which would read -t p.)
#pragma once

#include <CLI/CLI.hpp>

#include "vllm/engine_args.h"

namespace vllm {

void AddParallelismOptions(CLI::App& command, EngineArgs& args);

}  // namespace vllm
