#include "vllm/validated_sampling_params.h"

#include <algorithm>
#include <atomic>

#include "common/expected.h"

namespace vllm {
namespace {

std::atomic<int64_t> num_validations{0};

}  // namespace

Expected<ValidatedSamplingParams> ValidatedSamplingParams::Validate(SamplingParams params) {
  num_validations.fetch_add(1, std::memory_order_relaxed);
  if (std::string error = params.Validate(); !error.empty()) return Error{std::move(error)};
  return ValidatedSamplingParams(std::move(params));
}

Expected<ValidatedSamplingParams> ValidatedSamplingParams::BeamSearchStep(
    const BeamSearchParams& params) {
  num_validations.fetch_add(1, std::memory_order_relaxed);
  if (std::string error = params.Validate(); !error.empty()) return Error{std::move(error)};
  return ValidatedSamplingParams(params.StepParams());
}

ValidatedSamplingParams ValidatedSamplingParams::WithMaxTokens(int max_tokens) const {
  ValidatedSamplingParams fitted = *this;
  fitted.params_.max_tokens = std::max(max_tokens, 1);
  fitted.params_.min_tokens = std::min(fitted.params_.min_tokens, *fitted.params_.max_tokens);
  return fitted;
}

int64_t ValidatedSamplingParams::num_validations_for_testing() {
  return num_validations.load(std::memory_order_relaxed);
}

}  // namespace vllm
