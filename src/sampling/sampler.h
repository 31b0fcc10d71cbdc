// Turns one row of logits into the next token: temperature, top-k, top-p and min-p filtering,
// then a draw from a per-request generator (greedy when temperature is 0), as vLLM's sampler.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace vllm {

// The sampling subset of SamplingParams (already validated by SamplingParams::Validate).
struct SamplingOptions {
  float temperature = 1.0f;  // 0: greedy (argmax)
  int32_t top_k = 0;         // 0 or -1: all tokens
  float top_p = 1.0f;        // (0, 1]
  float min_p = 0.0f;        // [0, 1]
  std::optional<uint64_t> seed;
};

class Sampler {
 public:
  explicit Sampler(const SamplingOptions& options);

  // logits: [vocab_size]. Greedy picks the lowest index among equal maxima.
  int32_t Sample(const float* logits, int64_t vocab_size);

  // vLLM's rejection sampler for one speculative position whose draft distribution is one-hot
  // (n-gram drafts): the token to emit where `draft_token_id` was proposed. Greedy: the argmax
  // (the draft is accepted iff it is the argmax). Random: accepts the draft with probability
  // p(draft) under the distribution Sample draws from, else draws from that distribution with
  // the draft removed (max(0, p - q), renormalized). Either way the emitted token is distributed
  // as Sample's. The draft is accepted iff the result equals it.
  int32_t SampleWithDraft(const float* logits, int64_t vocab_size, int32_t draft_token_id);

  // The logits Sample draws from (vLLM's processed logits): greedy, `logits` as they are; else
  // divided by the temperature, with the tokens top-k, top-p and min-p drop at -inf. out:
  // [vocab_size].
  void Process(const float* logits, int64_t vocab_size, float* out);

 private:
  // Fills candidates_ with the temperature-scaled probabilities (unnormalized) and returns how
  // many of its first entries survive top-k, top-p and min-p.
  int64_t Filter(const float* logits, int64_t vocab_size);
  // Draws one of the first `count` candidates in proportion to their probability.
  int32_t Draw(int64_t count);

  SamplingOptions options_;
  std::mt19937_64 generator_;
  std::vector<std::pair<float, int32_t>> candidates_;  // (probability, token id) scratch
};

}  // namespace vllm
