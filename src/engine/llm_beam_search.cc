// LLM::BeamSearch: vLLM's LLM.beam_search on the synchronous engine. Each step runs every live beam
// of every prompt as a one-token request whose prompt is the beam's tokens; the prefix cache keeps
// the beams' shared prefixes computed, so a step costs about one token per beam. A prompt's beams
// run with its adapter, whose id keys their prefix-cache blocks apart from other adapters'.
#include <stdexcept>

#include "engine/beam_search.h"
#include "engine/llm_engine.h"
#include "engine/lora_requests_per_prompt.h"
#include "tokenizer/tokenizer.h"
#include "vllm/llm.h"

namespace vllm {

std::vector<BeamSearchOutput> LLM::BeamSearch(
    const std::vector<PromptInput>& prompts, const BeamSearchParams& params,
    const std::vector<std::optional<LoraRequest>>& lora_requests) {
  CheckLoraRequestsPerPrompt(lora_requests, prompts.size());
  // The one check of the search's params: each step's requests take the checked step params.
  auto step_params = ValidatedSamplingParams::BeamSearchStep(params);
  if (!step_params) throw std::invalid_argument(step_params.error());
  if (!engine_->has_tokenizer()) {
    throw std::invalid_argument(
        "beam search needs a tokenizer, so it can't be used with 'skip_tokenizer_init'");
  }
  const Tokenizer& tokenizer = engine_->tokenizer();
  std::vector<vllm::BeamSearch> searches;
  for (const PromptInput& prompt : prompts) {
    const auto* text = std::get_if<std::string>(&prompt);
    std::vector<int32_t> token_ids = text ? tokenizer.Encode(*text, /*add_special_tokens=*/true)
                                          : std::get<std::vector<int32_t>>(prompt);
    searches.emplace_back(std::move(token_ids),
                          vllm::BeamSearch::Options{.params = params,
                                                    .eos_token_id = tokenizer.eos_id(),
                                                    .max_model_len = engine_->max_model_len()});
  }
  bool refused = false;  // the engine refused a request (vs. failed a step)
  auto step = [&](const std::vector<const std::vector<int32_t>*>& sequences,
                  const std::vector<size_t>& search_indices,
                  int) -> Expected<std::vector<std::optional<PositionLogprobs>>> {
    const std::string prefix = "beam-";
    for (size_t i = 0; i < sequences.size(); ++i) {
      const RequestOptions options{.lora_request =
                                       LoraRequestOfPrompt(lora_requests, search_indices[i])};
      Status status =
          engine_->AddRequest(prefix + std::to_string(i), *sequences[i], *step_params, options);
      if (!status.ok()) {
        std::vector<std::string> added;
        for (size_t j = 0; j < i; ++j) added.push_back(prefix + std::to_string(j));
        engine_->AbortRequests(added);
        refused = true;
        return Error{status.message()};
      }
    }
    std::vector<std::optional<PositionLogprobs>> next(sequences.size());
    while (engine_->HasUnfinishedRequests()) {
      CheckInterrupt([&] {
        std::vector<std::string> step_ids;
        for (size_t i = 0; i < sequences.size(); ++i) {
          step_ids.push_back(prefix + std::to_string(i));
        }
        engine_->AbortRequests(step_ids);
      });
      auto outputs = engine_->Step();
      if (!outputs) return Error{outputs.error()};
      for (const RequestOutput& output : *outputs) {
        if (!output.finished || output.outputs.empty()) continue;
        const auto& logprobs = output.outputs[0].logprobs;
        if (!logprobs || logprobs->empty()) continue;  // it could not grow
        next[std::stoul(output.request_id.substr(prefix.size()))] = logprobs->front();
      }
    }
    return next;
  };
  Status status = RunBeamSearches(&searches, step);
  if (!status.ok()) {
    if (refused) throw std::invalid_argument(status.message());
    throw std::runtime_error(status.message());
  }
  std::vector<BeamSearchOutput> outputs;
  for (const vllm::BeamSearch& search : searches) {
    BeamSearchOutput output = search.Finish();
    for (BeamSearchSequence& sequence : output.sequences) {
      sequence.text = tokenizer.Decode(sequence.tokens, params.skip_special_tokens);
    }
    outputs.push_back(std::move(output));
  }
  return outputs;
}

}  // namespace vllm
