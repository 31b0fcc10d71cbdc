#pragma once

#include <CLI/CLI.hpp>

namespace vllm {
// `vllm-cpp bench throughput` and `vllm-cpp bench latency`, with vLLM's definitions.
void RegisterBenchEngineCommands(CLI::App& bench);
}  // namespace vllm
