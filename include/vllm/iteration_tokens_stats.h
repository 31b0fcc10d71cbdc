// Tokens per engine step, cumulative over the engine's life (vLLM's vllm:iteration_tokens_total
// histogram, with its bucket bounds).
#pragma once

#include <array>
#include <cstdint>

namespace vllm {

struct IterationTokensStats {
  static constexpr std::array<int64_t, 13> kUpperBounds = {1,   8,    16,   32,   64,   128,  256,
                                                           512, 1024, 2048, 4096, 8192, 16384};
  // Steps by the first bucket whose bound holds their token count; the last slot: above all.
  std::array<int64_t, kUpperBounds.size() + 1> num_steps_by_bucket{};
  int64_t num_steps = 0;
  int64_t num_tokens = 0;

  // One step that scheduled `num_step_tokens` tokens (prompt and decode together).
  void Observe(int64_t num_step_tokens) {
    size_t bucket = 0;
    while (bucket < kUpperBounds.size() && num_step_tokens > kUpperBounds[bucket]) ++bucket;
    ++num_steps_by_bucket[bucket];
    ++num_steps;
    num_tokens += num_step_tokens;
  }
};

}  // namespace vllm
