#pragma once

#include <CLI/CLI.hpp>

namespace vllm {
// `vllm-cpp chat MODEL [--chat-template T] [--system-prompt S] [sampling flags]`: an interactive
// chat in the terminal, with the model in process. Each reply streams as it is generated.
void RegisterChatCommand(CLI::App& app);
}  // namespace vllm
