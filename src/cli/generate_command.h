#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "vllm/async_llm.h"
#include "vllm/engine_args.h"

namespace vllm {
// `vllm-cpp generate --model M (--prompt P | --prompts-file F) [--max-tokens N] [--temperature T]
//  [--top-k K] [--top-p P] [--min-p P] [--seed S] [--ignore-eos]` and the engine flags: prints
// only the generated text on stdout (or one JSON line per prompt of the file).
void RegisterGenerateCommand(CLI::App& app);

// The engine flags with vLLM's names, shared by the commands that run an engine.
void AddEngineOptions(CLI::App& command, EngineArgs& args);

// Starts an AsyncLLM; on failure prints the error and returns null.
std::unique_ptr<AsyncLLM> StartAsyncEngine(const EngineArgs& args);

// The chat template a --chat-template flag names: a file when one exists at that path, else the
// template itself; `model_template` when the flag is empty.
std::string ReadChatTemplate(const std::string& flag, const std::string& model_template);
}  // namespace vllm
