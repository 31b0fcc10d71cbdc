#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>

namespace vllm {

Sampler::Sampler(const SamplingOptions& options)
    : options_(options), generator_(options.seed.value_or(std::random_device{}())) {}

namespace {

bool IsGreedy(const SamplingOptions& options) { return options.temperature < 1e-5f; }

int32_t Argmax(const float* logits, int64_t vocab_size) {
  return static_cast<int32_t>(std::max_element(logits, logits + vocab_size) - logits);
}

}  // namespace

int32_t Sampler::Sample(const float* logits, int64_t vocab_size) {
  if (IsGreedy(options_)) return Argmax(logits, vocab_size);
  return Draw(Filter(logits, vocab_size));
}

int32_t Sampler::SampleWithDraft(const float* logits, int64_t vocab_size, int32_t draft_token_id) {
  if (IsGreedy(options_)) return Argmax(logits, vocab_size);
  const int64_t count = Filter(logits, vocab_size);
  double total = 0.0;
  int64_t draft_index = -1;
  for (int64_t i = 0; i < count; ++i) {
    total += candidates_[i].first;
    if (candidates_[i].second == draft_token_id) draft_index = i;
  }
  // One uniform draw per verified draft, accepted while u < p(draft); a draft outside the
  // filtered set has p = 0.
  const double uniform = std::uniform_real_distribution<double>(0.0, 1.0)(generator_);
  if (draft_index < 0) return Draw(count);
  if (uniform * total < candidates_[draft_index].first) return draft_token_id;
  candidates_[draft_index].first = 0.0f;  // the residual max(0, p - one_hot(draft))
  return Draw(count);
}

void Sampler::Process(const float* logits, int64_t vocab_size, float* out) {
  if (IsGreedy(options_)) {
    std::copy(logits, logits + vocab_size, out);
    return;
  }
  for (int64_t i = 0; i < vocab_size; ++i) out[i] = logits[i] / options_.temperature;
  const int64_t kept = Filter(logits, vocab_size);
  if (kept == vocab_size) return;
  std::vector<float> kept_logits(kept);
  for (int64_t i = 0; i < kept; ++i) kept_logits[i] = out[candidates_[i].second];
  std::fill(out, out + vocab_size, -INFINITY);
  for (int64_t i = 0; i < kept; ++i) out[candidates_[i].second] = kept_logits[i];
}

int64_t Sampler::Filter(const float* logits, int64_t vocab_size) {
  // Softmax of logits / temperature, in a numerically stable form.
  float max_logit = *std::max_element(logits, logits + vocab_size);
  candidates_.resize(vocab_size);
  for (int64_t i = 0; i < vocab_size; ++i) {
    float p = std::exp((logits[i] - max_logit) / options_.temperature);
    candidates_[i] = {p, static_cast<int32_t>(i)};
  }
  const bool filters = (options_.top_k > 0 && options_.top_k < vocab_size) ||
                       options_.top_p < 1.0f || options_.min_p > 0.0f;
  if (!filters) return vocab_size;  // plain sampling needs no order
  // Most probable first; ties broken by token id so the order is deterministic.
  auto by_probability = [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  };
  int64_t keep = vocab_size;
  if (options_.top_k > 0 && options_.top_k < vocab_size) {
    keep = options_.top_k;
    std::partial_sort(candidates_.begin(), candidates_.begin() + keep, candidates_.end(),
                      by_probability);
  } else {
    std::sort(candidates_.begin(), candidates_.end(), by_probability);
  }
  if (options_.top_p < 1.0f) {
    // Keep the smallest prefix whose mass reaches top_p (always at least one token).
    double kept_sum = 0.0;
    for (int64_t i = 0; i < keep; ++i) kept_sum += candidates_[i].first;
    double cumulative = 0.0;
    int64_t prefix = 0;
    while (prefix < keep) {
      cumulative += candidates_[prefix].first;
      ++prefix;
      if (cumulative >= options_.top_p * kept_sum) break;
    }
    keep = prefix;
  }
  if (options_.min_p > 0.0f) {
    const float threshold = options_.min_p * candidates_[0].first;
    int64_t prefix = 1;
    while (prefix < keep && candidates_[prefix].first >= threshold) ++prefix;
    keep = prefix;
  }
  return keep;
}

int32_t Sampler::Draw(int64_t count) {
  double total = 0.0;
  for (int64_t i = 0; i < count; ++i) total += candidates_[i].first;
  double draw = std::uniform_real_distribution<double>(0.0, total)(generator_);
  for (int64_t i = 0; i < count; ++i) {
    draw -= candidates_[i].first;
    if (draw < 0.0) return candidates_[i].second;
  }
  return candidates_[count - 1].second;
}

}  // namespace vllm
