#pragma once

#include <CLI/CLI.hpp>

namespace vllm {
// `vllm-cpp tokenize --model M [--add-special-tokens] [--text T | --text-file F]`: prints the ids
// as a JSON array on stdout.
void RegisterTokenizeCommand(CLI::App& app);
}  // namespace vllm
