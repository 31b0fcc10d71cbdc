#pragma once

#include <CLI/CLI.hpp>

namespace vllm {
// `vllm-cpp bench gemm [--shape S] [--dtype T,...] [-m M,...] [-r 3] [--threads T]`: the linear
// layers' GEMM speed per weight type and batch rows, beside the dot-product peak and the read
// bandwidth measured in the same run.
void RegisterBenchGemmCommand(CLI::App& bench);
}  // namespace vllm
