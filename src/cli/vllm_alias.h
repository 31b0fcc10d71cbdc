// The `vllm` command name: this binary run as `vllm` takes vLLM's command lines (`vllm serve
// MODEL ...`) as it does as `vllm-cpp`. The name is installed only on request, and never over a
// real vLLM.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common/expected.h"

namespace vllm {

// Whether argv[0] names this binary `vllm`.
bool InvokedAsVllm(const std::string& argv0);

// Makes DIR/vllm a symbolic link to `binary`. Refused when DIR/vllm exists and is not a link to
// it, or when a `vllm` on `path` (a PATH list) is another program (a real vLLM): it would shadow
// it or be shadowed. Returns what it did, for the user.
Expected<std::string> InstallVllmAlias(const std::string& dir, const std::string& binary,
                                       const std::string& path);

// `vllm-cpp install-vllm-alias DIR`.
void RegisterInstallVllmAliasCommand(CLI::App& app);

}  // namespace vllm
