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

// The most draft tokens a step may propose per sequence. vLLM has no fixed limit (its drafts are
// only cut at max_model_len), but each draft token costs a draft-model forward or a verified
// position whether it is accepted or not, while all k drafts are accepted with probability about
// a^k for a per-token acceptance rate a: even at a = 0.95 the 64th draft is reached 4% of the
// time, so more only adds work (1,000,000 made one 1,200-token request take 117 s of CPU).
inline constexpr int kMaxNumSpeculativeTokens = 64;
// The longest n-gram a prompt lookup matches (prompt_lookup_max): the search takes about
// prompt_lookup_max - prompt_lookup_min + 1 passes over the context per sequence and step, and
// vLLM's default is 5.
inline constexpr int kMaxPromptLookup = 64;

// A --speculative-config resolved: one of `ngram` or `draft_model` is set.
struct SpeculativeMethod {
  int num_speculative_tokens = 0;
  // "ngram": prompt_lookup_min / max default to each other, or both to 5.
  std::optional<NgramProposer::Options> ngram;
  // "draft_model" (also `model` given without a method, as vLLM infers it): the draft's path.
  std::string draft_model;
};
// Refuses a num_speculative_tokens or prompt lookup bound out of range (the engine also refuses
// num_speculative_tokens >= max_model_len, once it knows max_model_len).
Expected<SpeculativeMethod> ResolveSpeculativeConfig(const SpeculativeConfig& config);

// A draft model fits the target when its vocabulary size is the target's and its context holds
// max_model_len (the engine's) tokens.
Status CheckDraftModel(const ModelConfig& target, const ModelConfig& draft, int64_t max_model_len);

}  // namespace vllm
