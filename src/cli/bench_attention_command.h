#pragma once

#include <CLI/CLI.hpp>

namespace vllm {
// `vllm-cpp bench attention [--shape S] [--num-seqs N,...] [--context C] [--kv-cache-dtype D]
// [-r 3] [--threads T]`: a decode step's paged attention over every layer of a model shape (one
// new token per sequence against C cached ones), as time per layer and KV bytes read per second
// beside the read bandwidth measured in the same run.
void RegisterBenchAttentionCommand(CLI::App& bench);
}  // namespace vllm
