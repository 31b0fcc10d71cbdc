#pragma once

#include <CLI/CLI.hpp>

namespace vllm {
// `vllm-cpp make-random-model --shape S --dtype T --vocab V --out F [--seed N] [--num-layers L]`
void RegisterMakeRandomModelCommand(CLI::App& app);
}  // namespace vllm
