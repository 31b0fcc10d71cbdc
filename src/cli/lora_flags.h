// vLLM's LoRA flags: the engine's (--enable-lora, --max-loras, --max-lora-rank, --max-cpu-loras,
// --lora-dtype) on every engine command, and serve's --lora-modules, parsed as vLLM's
// LoRAParserAction reads them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common/expected.h"
#include "server/openai/lora_adapters/registry.h"
#include "vllm/engine_args.h"

namespace vllm {

// Adds the engine's LoRA flags to `command`, writing `args` (checked when the engine starts).
void AddLoraEngineOptions(CLI::App& command, EngineArgs& args);

// --lora-modules items: name=path, or a JSON object {"name", "path", "base_model_name"}. Empty
// items are skipped; bad JSON, a missing or unknown field, or a field of the wrong type is an
// error quoting the item, as vLLM's.
Expected<std::vector<server::LoraModulePath>> ParseLoraModules(
    const std::vector<std::string>& items);

}  // namespace vllm
