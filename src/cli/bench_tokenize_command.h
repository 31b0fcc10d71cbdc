#pragma once

#include <CLI/CLI.hpp>

namespace vllm {
// `vllm-cpp bench tokenize (--tokenizer DIR | --model GGUF) --input FILE [--repeats N]`: encode
// and decode throughput of a tokenizer on a text file, in MB/s (best of N passes).
void RegisterBenchTokenizeCommand(CLI::App& bench);
}  // namespace vllm
