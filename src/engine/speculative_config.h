// vLLM's SpeculativeConfig checks and defaults (its __post_init__) for the methods implemented:
// "ngram" (prompt lookup). Other methods are refused with an error naming what works.
#pragma once

#include "common/expected.h"
#include "runner/ngram_proposer.h"
#include "vllm/engine_args.h"

namespace vllm {

// The n-gram proposer's options: prompt_lookup_min / max default to each other, or both to 5.
Expected<NgramProposer::Options> ResolveSpeculativeConfig(const SpeculativeConfig& config);

}  // namespace vllm
