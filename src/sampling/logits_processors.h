// vLLM's per-request logits processors, applied to one row of logits before sampling:
// repetition / frequency / presence penalties, logit_bias, allowed_token_ids, bad_words and
// min_tokens. Each only touches the ids it names, so a row is processed the same in any batch.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "vllm/sampling_params.h"

namespace vllm {

struct LogitsContext {
  std::span<const int32_t> prompt_token_ids;
  std::span<const int32_t> output_token_ids;
  std::vector<std::vector<int32_t>> bad_words_token_ids;  // each bad word's id sequences
  std::vector<int32_t> min_tokens_stop_ids;  // banned while output < min_tokens (EOS, stop ids)
};

// logits: [vocab_size], modified in place.
void ApplyLogitsProcessors(const SamplingParams& params, const LogitsContext& context,
                           int64_t vocab_size, float* logits);

// One position's logprobs: the sampled token's (with its rank) and the top `num_top` ones.
struct TokenLogprobs {
  int32_t token_id = 0;
  float logprob = 0.0f;
  int rank = 0;                                // 1 = most likely
  std::vector<std::pair<int32_t, float>> top;  // (id, logprob), most likely first
};

// log_softmax of `logits` for `token_id` and the top `num_top` ids (num_top -1: the whole
// vocabulary). Ties rank by id.
TokenLogprobs ComputeLogprobs(const float* logits, int64_t vocab_size, int32_t token_id,
                              int num_top);

// The same ranking of `logits` themselves, unnormalized (vLLM's raw_logits / processed_logits
// logprobs modes): `logprob` and `top` hold logits.
TokenLogprobs RankLogits(const float* logits, int64_t vocab_size, int32_t token_id, int num_top);

}  // namespace vllm
