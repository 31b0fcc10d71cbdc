// Beam search over any engine, as vLLM runs it on top of its own: each step extends every live
// beam of a prompt by one of its top 2 * beam_width next tokens; a candidate ending in EOS (unless
// ignore_eos) is finished, the best beam_width of the others stay live; after max_tokens steps the
// finished and live beams are ranked by the length-penalized score and the best beam_width kept.
//
// BeamSearch is the state of one prompt, advanced one step at a time, so that a synchronous
// driver (RunBeamSearches, for LLM::BeamSearch) and an asynchronous one (the server's, which
// submits each step's requests to AsyncLLM) share the algorithm:
//
//   while (!search.done()) {
//     for each beam in search.live_beams(): next[i] = top search.num_logprobs() logprobs of
//                                            the token after beam.tokens (nullopt: context full)
//     search.Advance(next);
//   }
//   output = search.Finish();
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "common/expected.h"
#include "vllm/beam_search.h"

namespace vllm {

// vLLM's get_beam_search_score: cum_logprob / seq_len ** length_penalty, where seq_len counts the
// prompt and the generated tokens but not a final EOS.
double BeamSearchScore(const std::vector<int32_t>& tokens, double cum_logprob, int32_t eos_token_id,
                       float length_penalty);

class BeamSearch {
 public:
  struct Options {
    BeamSearchParams params;
    int32_t eos_token_id = -1;  // -1: the vocabulary has none
    // A beam this long cannot grow: it finishes with finish_reason "length".
    int64_t max_model_len = INT64_MAX;
  };

  BeamSearch(std::vector<int32_t> prompt_token_ids, Options options);

  // The beams to extend by one token this step, best first (while !done()).
  const std::vector<BeamSearchSequence>& live_beams() const { return live_; }
  // True after max_tokens steps, once no beam is live, or after Stop().
  bool done() const {
    return stopped_ || live_.empty() || num_steps_ >= options_.params.max_tokens;
  }
  // How many next-token logprobs a step needs per beam: 2 * beam_width.
  int num_logprobs() const { return 2 * options_.params.beam_width; }
  int num_prompt_tokens() const { return num_prompt_tokens_; }

  // `next[i]`: the top num_logprobs() next-token logprobs of live_beams()[i] (more entries are
  // candidates too), or nullopt when that beam could not be extended.
  void Advance(const std::vector<std::optional<PositionLogprobs>>& next);
  // Ends the search early (an abort): live beams stay as they are.
  void Stop() { stopped_ = true; }

  // The best beam_width of the finished and live beams, best first; `text` is left empty.
  BeamSearchOutput Finish() const;

 private:
  double Score(const BeamSearchSequence& beam) const;
  // Sorts `beams` best first; equal scores keep their order.
  void Rank(std::vector<BeamSearchSequence>* beams) const;

  const Options options_;
  const int num_prompt_tokens_;
  int num_steps_ = 0;
  bool stopped_ = false;
  std::vector<BeamSearchSequence> live_;
  std::vector<BeamSearchSequence> finished_;
};

// One step for a batch of sequences: `next[i]` as BeamSearch::Advance takes it for
// `sequences[i]`, asking for `num_logprobs` logprobs; sequences[i] is a beam of the search
// searches[search_indices[i]] (whose prompt's adapter, say, it runs with).
using BeamStepFunction = std::function<Expected<std::vector<std::optional<PositionLogprobs>>>(
    const std::vector<const std::vector<int32_t>*>& sequences,
    const std::vector<size_t>& search_indices, int num_logprobs)>;

// Runs `searches` to the end, one batched step for all their live beams at a time.
Status RunBeamSearches(std::vector<BeamSearch>* searches, const BeamStepFunction& step);

}  // namespace vllm
