// How one request samples, kept by the runner from the request's arrival until it finishes
// (vLLM's CachedRequestState with its structured-output request): its generator, what its logits
// processors need, and its grammar matcher.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "sampling/logits_processors.h"
#include "sampling/logprobs_mode.h"
#include "sampling/sampler.h"
#include "structured_output/grammar_matcher.h"
#include "vllm/sampling_params.h"

namespace vllm {

// What a request brings for sampling (params already validated).
struct SamplingInputs {
  SamplingParams params;
  std::vector<std::vector<int32_t>> bad_words_token_ids;  // each bad word's id sequences
  std::optional<int32_t> eos_token_id;                    // banned while output < min_tokens
  std::shared_ptr<const CompiledGrammar> grammar;         // null: unconstrained
  // The constraint starts once the output ends with these ids (the reasoning's end marker);
  // empty: from the first output token.
  std::vector<int32_t> grammar_after_token_ids;
  LogprobsMode logprobs_mode = LogprobsMode::kRawLogprobs;  // the engine's --logprobs-mode
};

// One sampled token.
struct SampledResult {
  int32_t token_id = 0;
  std::optional<TokenLogprobs> logprobs;  // when params.logprobs asks
};

class RequestSampler {
 public:
  explicit RequestSampler(SamplingInputs inputs);

  // Samples the token after `prompt` + `output` from `row` ([vocab_size] logits, modified in
  // place): logits processors, then the grammar's mask, then the sampler. The grammar accepts
  // the sampled token.
  SampledResult Sample(std::span<const int32_t> prompt, std::span<const int32_t> output, float* row,
                       int64_t vocab_size);

  // Verifies `draft_token_ids` proposed after `prompt` + `output` (exact rejection sampling).
  // rows: [draft_token_ids.size() + 1, vocab_size], row j scoring the token after output +
  // drafts[0, j); modified in place. Each row is processed exactly as Sample would with the
  // drafts before it as output; row j emits a token with the sampler's rejection rule for
  // drafts[j] and, when that token is the draft, verification goes on with row j + 1. Returns
  // the accepted drafts followed by one more token (the correction, or the bonus token after
  // every draft was accepted): [num_accepted + 1].
  std::vector<SampledResult> SampleWithDrafts(std::span<const int32_t> prompt,
                                              std::span<const int32_t> output,
                                              std::span<const int32_t> draft_token_ids, float* rows,
                                              int64_t vocab_size);

  const SamplingParams& params() const { return inputs_.params; }
  // Prompt tokens [1, n] whose logprobs were already reported (kept across preemptions).
  int64_t num_prompt_logprobs = 0;

 private:
  // Whether the grammar constrains the token after `output`.
  bool GrammarApplies(std::span<const int32_t> output);
  // Sample, verifying `draft_token_id` when there is one.
  SampledResult SampleRow(std::span<const int32_t> prompt, std::span<const int32_t> output,
                          float* row, int64_t vocab_size, std::optional<int32_t> draft_token_id);

  SamplingInputs inputs_;
  Sampler sampler_;
  std::optional<GrammarMatcher> matcher_;
  bool grammar_started_ = false;
  std::vector<uint32_t> bitmask_;  // [TokenBitmaskWords(vocab_size)] scratch
};

}  // namespace vllm
