#pragma once

#include <CLI/CLI.hpp>

namespace vllm {
// `vllm-cpp serve MODEL [--host H] [--port P] [--api-key K] [--served-model-name N...]
//  [--chat-template T] [--allowed-origins O] [engine flags]`: vLLM's OpenAI-compatible server.
void RegisterServeCommand(CLI::App& app);
}  // namespace vllm
