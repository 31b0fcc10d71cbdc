#pragma once

#include <CLI/CLI.hpp>

namespace vllm {
// `vllm-cpp bench serve`: vLLM's serving benchmark against a running server — a closed loop of
// `--max-concurrency` streaming clients over random prompts (ignore_eos), reporting TTFT, TPOT,
// ITL (median and p99) and output throughput by vLLM's definitions.
void RegisterBenchServeCommand(CLI::App& bench);
}  // namespace vllm
