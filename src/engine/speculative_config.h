// vLLM's SpeculativeConfig checks and defaults (its __post_init__) for the methods implemented:
// "ngram" (prompt lookup) and "draft_model" (a smaller model of the same vocabulary). Other
// methods are refused with an error naming what works.
#pragma once

#include <optional>
#include <string>

#include "common/expected.h"
#include "model/model_config.h"
#include "runner/ngram_proposer.h"
#include "vllm/engine_args.h"

namespace vllm {

// A --speculative-config resolved: one of `ngram` or `draft_model` is set.
struct SpeculativeMethod {
  int num_speculative_tokens = 0;
  // "ngram": prompt_lookup_min / max default to each other, or both to 5.
  std::optional<NgramProposer::Options> ngram;
  // "draft_model" (also `model` given without a method, as vLLM infers it): the draft's path.
  std::string draft_model;
};
Expected<SpeculativeMethod> ResolveSpeculativeConfig(const SpeculativeConfig& config);

// A draft model fits the target when its vocabulary size is the target's and its context holds
// max_model_len (the engine's) tokens.
Status CheckDraftModel(const ModelConfig& target, const ModelConfig& draft, int64_t max_model_len);

}  // namespace vllm
