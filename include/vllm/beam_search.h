// vLLM's beam search types: BeamSearchParams (what LLM::BeamSearch and the server's
// use_beam_search take), BeamSearchSequence and BeamSearchOutput (what they return). Field names,
// defaults and ranking follow vllm/beam_search.py and vllm/sampling_params.py.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "vllm/outputs.h"
#include "vllm/sampling_params.h"

namespace vllm {

struct BeamSearchParams {
  // The most logprobs one step may ask for (vLLM's default max_logprobs): a step asks for
  // 2 * beam_width of them.
  static constexpr int kMaxLogprobs = 20;

  int beam_width = 1;
  int max_tokens = 16;
  bool ignore_eos = false;
  // The step requests sample with it, but a beam grows only by one of the top 2 * beam_width
  // tokens, so it cannot change the result (as in vLLM, whose logprobs are the raw ones).
  float temperature = 0.0f;
  float length_penalty = 1.0f;
  bool include_stop_str_in_output = false;
  bool skip_special_tokens = true;  // when decoding a sequence's text

  // The empty string when valid; otherwise the message (vLLM's where it has one).
  std::string Validate() const {
    if (beam_width < 1) {
      return "beam_width must be at least 1, got " + std::to_string(beam_width) + ".";
    }
    if (2 * static_cast<int64_t>(beam_width) > kMaxLogprobs) {
      return "Requested sample logprobs of " +
             std::to_string(2 * static_cast<int64_t>(beam_width)) +
             ", which is greater than max allowed: " + std::to_string(kMaxLogprobs);
    }
    if (max_tokens < 1)
      return "max_tokens must be at least 1, got " + std::to_string(max_tokens) + ".";
    SamplingParams step = StepParams();
    step.temperature = temperature;  // vLLM's step runs with it: refuse what it would refuse
    return step.Validate();
  }

  // What one step asks of the engine for one beam: its next token's top 2 * beam_width logprobs.
  // Greedy, so that a run is reproducible (the sampled token is then one of the top ones).
  SamplingParams StepParams() const {
    SamplingParams step;
    step.temperature = 0.0f;
    step.max_tokens = 1;
    step.logprobs = 2 * beam_width;
    step.output_kind = RequestOutputKind::kFinalOnly;
    return step;
  }
};

// One finished beam.
struct BeamSearchSequence {
  std::vector<int32_t> tokens;  // the prompt's token ids, then the generated ones
  // One per generated token: the 2 * beam_width candidates its step considered.
  std::vector<PositionLogprobs> logprobs;
  double cum_logprob = 0.0;
  std::string text;  // LLM::BeamSearch: tokens decoded, prompt included (as vLLM's LLM does)
  // "stop" when it ended with EOS; "length" when the context was full; empty when it was still
  // live after max_tokens steps (vLLM's None).
  std::string finish_reason;
  // The EOS token id when it ended with EOS; monostate otherwise.
  std::variant<std::monostate, std::string, int32_t> stop_reason;
};

// The best beam_width sequences of one prompt, best first.
struct BeamSearchOutput {
  std::vector<BeamSearchSequence> sequences;
};

}  // namespace vllm
