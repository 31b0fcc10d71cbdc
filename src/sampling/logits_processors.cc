#include "sampling/logits_processors.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace vllm {

void ApplyLogitsProcessors(const SamplingParams& params, const LogitsContext& context,
                           int64_t vocab_size, float* logits) {
  auto valid = [vocab_size](int32_t id) { return id >= 0 && id < vocab_size; };
  // Repetition penalty: every token seen in the prompt or the output.
  if (params.repetition_penalty != 1.0f) {
    std::vector<bool> seen(vocab_size, false);
    for (auto ids : {context.prompt_token_ids, context.output_token_ids}) {
      for (int32_t id : ids) {
        if (valid(id)) seen[id] = true;
      }
    }
    for (int64_t id = 0; id < vocab_size; ++id) {
      if (!seen[id]) continue;
      logits[id] = logits[id] > 0 ? logits[id] / params.repetition_penalty
                                  : logits[id] * params.repetition_penalty;
    }
  }
  // Frequency and presence penalties: output tokens only.
  if (params.frequency_penalty != 0.0f || params.presence_penalty != 0.0f) {
    std::unordered_map<int32_t, int> counts;
    for (int32_t id : context.output_token_ids) {
      if (valid(id)) ++counts[id];
    }
    for (const auto& [id, count] : counts) {
      logits[id] -= params.frequency_penalty * count + params.presence_penalty;
    }
  }
  for (const auto& [id, bias] : params.logit_bias) {
    if (valid(id)) logits[id] += bias;
  }
  if (params.allowed_token_ids) {
    std::vector<bool> allowed(vocab_size, false);
    for (int32_t id : *params.allowed_token_ids) {
      if (valid(id)) allowed[id] = true;
    }
    for (int64_t id = 0; id < vocab_size; ++id) {
      if (!allowed[id]) logits[id] = -INFINITY;
    }
  }
  // A bad word's last token is banned when the output ends with the rest of the word.
  const auto& output = context.output_token_ids;
  for (const auto& word : context.bad_words_token_ids) {
    if (word.empty() || !valid(word.back())) continue;
    const size_t prefix = word.size() - 1;
    if (prefix > output.size()) continue;
    if (std::equal(word.begin(), word.end() - 1, output.end() - prefix)) {
      logits[word.back()] = -INFINITY;
    }
  }
  if (static_cast<int64_t>(output.size()) < params.min_tokens) {
    for (int32_t id : context.min_tokens_stop_ids) {
      if (valid(id)) logits[id] = -INFINITY;
    }
  }
}

namespace {

// `logits` ranked, each value less `log_normalizer` (0: the logits as they are).
TokenLogprobs RankShifted(const float* logits, int64_t vocab_size, int32_t token_id, int num_top,
                          float log_normalizer) {
  TokenLogprobs result;
  result.token_id = token_id;
  result.logprob = logits[token_id] - log_normalizer;
  // Rank: 1 + how many ids are more likely (ties: lower ids first).
  result.rank = 1;
  for (int64_t i = 0; i < vocab_size; ++i) {
    if (logits[i] > logits[token_id] || (logits[i] == logits[token_id] && i < token_id)) {
      ++result.rank;
    }
  }
  const int64_t count = num_top < 0 ? vocab_size : std::min<int64_t>(num_top, vocab_size);
  if (count > 0) {
    std::vector<int32_t> ids(vocab_size);
    for (int64_t i = 0; i < vocab_size; ++i) ids[i] = static_cast<int32_t>(i);
    auto more_likely = [logits](int32_t a, int32_t b) {
      return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
    };
    std::partial_sort(ids.begin(), ids.begin() + count, ids.end(), more_likely);
    for (int64_t i = 0; i < count; ++i) {
      result.top.emplace_back(ids[i], logits[ids[i]] - log_normalizer);
    }
  }
  return result;
}

}  // namespace

TokenLogprobs ComputeLogprobs(const float* logits, int64_t vocab_size, int32_t token_id,
                              int num_top) {
  const float max_logit = *std::max_element(logits, logits + vocab_size);
  double sum = 0.0;
  for (int64_t i = 0; i < vocab_size; ++i) sum += std::exp(double{logits[i]} - max_logit);
  const float log_normalizer = max_logit + static_cast<float>(std::log(sum));
  return RankShifted(logits, vocab_size, token_id, num_top, log_normalizer);
}

TokenLogprobs RankLogits(const float* logits, int64_t vocab_size, int32_t token_id, int num_top) {
  return RankShifted(logits, vocab_size, token_id, num_top, 0.0f);
}

}  // namespace vllm
