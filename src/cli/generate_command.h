#pragma once

#include <CLI/CLI.hpp>

namespace vllm {
// `vllm-cpp generate --model M --prompt P [--max-tokens N] [--temperature T] [--top-k K]
//  [--top-p P] [--min-p P] [--seed S] [--ignore-eos]`: prints only the generated text on stdout.
void RegisterGenerateCommand(CLI::App& app);
}  // namespace vllm
