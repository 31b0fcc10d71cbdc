// Engine arguments and sampling params the engine tests share: 2 threads and a small KV cache. The
// KV cache is made resident at start: 64 MiB (thousands of blocks) holds every test's sequences and
// is quick to reserve, where the default would cost each test process hundreds of MiB.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include "common/expected.h"
#include "vllm/engine_args.h"
#include "vllm/sampling_params.h"
#include "vllm/validated_sampling_params.h"

namespace vllm {

inline EngineArgs TestArgs(const std::string& model) {
  EngineArgs args;
  args.model = model;
  args.num_threads = 2;
  args.kv_cache_memory_bytes = int64_t{64} << 20;
  return args;
}

// The real demo model in ../shared.
inline EngineArgs StoriesArgs() {
  return TestArgs(std::string(VLLM_SHARED_DIR) + "/models/stories260K.gguf");
}

// `params` checked as an entry point checks them, for LLMEngine::AddRequest (throws
// std::invalid_argument with vLLM's message when they are invalid).
inline ValidatedSamplingParams Checked(const SamplingParams& params) {
  auto validated = ValidatedSamplingParams::Validate(params);
  if (!validated) throw std::invalid_argument(validated.error());
  return std::move(*validated);
}

// Greedy decoding of max_tokens tokens.
inline SamplingParams Greedy(int max_tokens) {
  SamplingParams params;
  params.temperature = 0.0f;
  params.max_tokens = max_tokens;
  return params;
}

// Seeded random sampling of max_tokens tokens, as the speculative decoding tests compare it.
inline SamplingParams SeededSampling(int max_tokens) {
  SamplingParams params;
  params.temperature = 0.8f;
  params.top_p = 0.95f;
  params.seed = 1234;
  params.max_tokens = max_tokens;
  return params;
}

}  // namespace vllm
