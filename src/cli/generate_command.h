#pragma once

#include <CLI/CLI.hpp>

#include "vllm/engine_args.h"

namespace vllm {
// `vllm-cpp generate --model M (--prompt P | --prompts-file F) [--max-tokens N] [--temperature T]
//  [--top-k K] [--top-p P] [--min-p P] [--seed S] [--ignore-eos]` and the engine flags: prints
// only the generated text on stdout (or one JSON line per prompt of the file).
void RegisterGenerateCommand(CLI::App& app);

// The engine flags with vLLM's names, shared by the commands that run an engine.
void AddEngineOptions(CLI::App& command, EngineArgs& args);
}  // namespace vllm
