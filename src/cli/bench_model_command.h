#pragma once

#include <CLI/CLI.hpp>

namespace vllm {
// `vllm-cpp bench model --model M [-p 512] [-n 128] [-r 3] [--threads T]`: llama-bench's pp/tg.
void RegisterBenchModelCommand(CLI::App& bench);
}  // namespace vllm
