// SamplingParams that passed SamplingParams::Validate. The engine (LLMEngine::AddRequest,
// AsyncLLM::Submit's validated overload) takes only these, so a request's params are checked once,
// where the request comes in (the HTTP server's request checks, the Python binding, the CLI's
// options, LLM::Generate), and never again below: an unchecked SamplingParams cannot reach it.
#pragma once

#include <cstdint>
#include <utility>

#include "vllm/beam_search.h"
#include "vllm/sampling_params.h"

namespace vllm {

template <typename T>
class Expected;  // common/expected.h

class ValidatedSamplingParams {
 public:
  // SamplingParams' defaults, which are valid.
  ValidatedSamplingParams() = default;

  // `params` when SamplingParams::Validate accepts them (their structured-output constraint
  // included), else vLLM's message for the first invalid field.
  static Expected<ValidatedSamplingParams> Validate(SamplingParams params);
  // What each step of a beam search asks of the engine (BeamSearchParams::StepParams) when
  // `params` pass BeamSearchParams::Validate (which checks the step's params), else its message.
  static Expected<ValidatedSamplingParams> BeamSearchStep(const BeamSearchParams& params);

  // The same params with max_tokens set to `max_tokens` (raised to 1 when less), min_tokens
  // lowered to it when above, as a server fits a request to its prompt: both rules stay true, so
  // nothing is checked again.
  ValidatedSamplingParams WithMaxTokens(int max_tokens) const;

  // The same params with another output kind (a field every value of which is valid).
  ValidatedSamplingParams WithOutputKind(RequestOutputKind output_kind) const {
    ValidatedSamplingParams changed = *this;
    changed.params_.output_kind = output_kind;
    return changed;
  }

  const SamplingParams& get() const { return params_; }
  const SamplingParams& operator*() const { return params_; }
  const SamplingParams* operator->() const { return &params_; }

  // Tests: how many times Validate has checked params in this process (the count per request
  // is what the "validated once" tests measure).
  static int64_t num_validations_for_testing();

 private:
  explicit ValidatedSamplingParams(SamplingParams params) : params_(std::move(params)) {}

  SamplingParams params_;
};

}  // namespace vllm
