#include "runner/request_sampler.h"

#include <algorithm>

#include "sampling/token_bitmask.h"

namespace vllm {
namespace {

SamplingOptions ToSamplingOptions(const SamplingParams& params) {
  SamplingOptions options;
  options.temperature = params.temperature;
  options.top_k = params.top_k;
  options.top_p = params.top_p;
  options.min_p = params.min_p;
  if (params.seed) options.seed = static_cast<uint64_t>(*params.seed);
  return options;
}

}  // namespace

RequestSampler::RequestSampler(SamplingInputs inputs)
    : inputs_(std::move(inputs)), sampler_(ToSamplingOptions(inputs_.params)) {
  if (inputs_.grammar) {
    matcher_.emplace(inputs_.grammar);
    bitmask_.resize(TokenBitmaskWords(inputs_.grammar->vocab_size()));
  }
}

bool RequestSampler::GrammarApplies(std::span<const int32_t> output) {
  if (!matcher_) return false;
  if (!grammar_started_) {
    const auto& after = inputs_.grammar_after_token_ids;
    grammar_started_ =
        after.empty() || (output.size() >= after.size() &&
                          std::equal(after.begin(), after.end(), output.end() - after.size()));
  }
  return grammar_started_;
}

SampledResult RequestSampler::Sample(std::span<const int32_t> prompt,
                                     std::span<const int32_t> output, float* row,
                                     int64_t vocab_size) {
  return SampleRow(prompt, output, row, vocab_size, std::nullopt);
}

std::vector<SampledResult> RequestSampler::SampleWithDrafts(
    std::span<const int32_t> prompt, std::span<const int32_t> output,
    std::span<const int32_t> draft_token_ids, float* rows, int64_t vocab_size) {
  std::vector<int32_t> context(output.begin(), output.end());  // output + accepted drafts
  std::vector<SampledResult> results;
  for (size_t j = 0; j <= draft_token_ids.size(); ++j) {
    const std::optional<int32_t> draft =
        j < draft_token_ids.size() ? std::optional(draft_token_ids[j]) : std::nullopt;
    results.push_back(SampleRow(prompt, context, rows + j * vocab_size, vocab_size, draft));
    if (results.back().token_id != draft) break;
    context.push_back(*draft);
  }
  return results;
}

SampledResult RequestSampler::SampleRow(std::span<const int32_t> prompt,
                                        std::span<const int32_t> output, float* row,
                                        int64_t vocab_size, std::optional<int32_t> draft_token_id) {
  const SamplingParams& params = inputs_.params;
  SampledResult result;
  // The model's logits with the grammar's mask and nothing else: what the raw logprobs modes
  // read (vLLM masks the logits before its sampler, which reads raw logprobs first thing), so a
  // forbidden token's raw logprob is -inf and the allowed ones renormalize among themselves.
  std::vector<float> raw;
  const bool constrained = GrammarApplies(output);
  if ((params.logprobs && IsRaw(inputs_.logprobs_mode)) || constrained) {
    raw.assign(row, row + vocab_size);
  }
  bool grammar_allows_nothing = false;
  if (constrained) {
    matcher_->FillNextTokenBitmask(bitmask_);
    grammar_allows_nothing = !ApplyTokenBitmask(bitmask_, vocab_size, raw.data());
    if (grammar_allows_nothing) std::copy(row, row + vocab_size, raw.begin());  // unmasked again
  }
  LogitsContext context{prompt, output, inputs_.bad_words_token_ids, params.stop_token_ids};
  if (inputs_.eos_token_id && !params.ignore_eos) {
    context.min_tokens_stop_ids.push_back(*inputs_.eos_token_id);
  }
  ApplyLogitsProcessors(params, context, vocab_size, row);
  if (constrained && !grammar_allows_nothing && !ApplyTokenBitmask(bitmask_, vocab_size, row)) {
    // The processors banned every token the grammar allows (min_tokens against a complete
    // output, say): the constraint wins.
    std::copy(raw.begin(), raw.end(), row);
  }
  // A grammar that allows nothing (one past its parse limits, or complete in a vocabulary
  // without a stop token) ends the output with EOS rather than leave its language.
  const float* sampled_row = grammar_allows_nothing ? raw.data() : row;
  if (grammar_allows_nothing && inputs_.eos_token_id) {
    result.token_id = *inputs_.eos_token_id;
  } else if (draft_token_id) {
    result.token_id = sampler_.SampleWithDraft(sampled_row, vocab_size, *draft_token_id);
  } else {
    result.token_id = sampler_.Sample(sampled_row, vocab_size);
  }
  if (constrained) matcher_->AcceptToken(result.token_id);
  if (params.logprobs) {
    const LogprobsMode mode = inputs_.logprobs_mode;
    const float* values = raw.data();
    std::vector<float> processed;
    if (!IsRaw(mode)) {  // what the sampler drew from
      processed.resize(vocab_size);
      sampler_.Process(sampled_row, vocab_size, processed.data());
      values = processed.data();
    }
    result.logprobs = ReturnsLogits(mode)
                          ? RankLogits(values, vocab_size, result.token_id, *params.logprobs)
                          : ComputeLogprobs(values, vocab_size, result.token_id, *params.logprobs);
  }
  return result;
}

}  // namespace vllm
