// Beam search's steps and ranking (see beam_search.h).
#include "engine/beam_search.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace vllm {

double BeamSearchScore(const std::vector<int32_t>& tokens, double cum_logprob, int32_t eos_token_id,
                       float length_penalty) {
  size_t seq_len = tokens.size();
  if (!tokens.empty() && tokens.back() == eos_token_id) --seq_len;
  return cum_logprob / std::pow(static_cast<double>(seq_len), static_cast<double>(length_penalty));
}

BeamSearch::BeamSearch(std::vector<int32_t> prompt_token_ids, Options options)
    : options_(std::move(options)), num_prompt_tokens_(static_cast<int>(prompt_token_ids.size())) {
  BeamSearchSequence prompt;
  prompt.tokens = std::move(prompt_token_ids);
  live_.push_back(std::move(prompt));
}

double BeamSearch::Score(const BeamSearchSequence& beam) const {
  return BeamSearchScore(beam.tokens, beam.cum_logprob, options_.eos_token_id,
                         options_.params.length_penalty);
}

void BeamSearch::Rank(std::vector<BeamSearchSequence>* beams) const {
  std::vector<std::pair<double, size_t>> order;  // (score, index), best first
  order.reserve(beams->size());
  for (size_t i = 0; i < beams->size(); ++i) order.emplace_back(Score((*beams)[i]), i);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<BeamSearchSequence> ranked;
  ranked.reserve(beams->size());
  for (const auto& [score, index] : order) ranked.push_back(std::move((*beams)[index]));
  *beams = std::move(ranked);
}

void BeamSearch::Advance(const std::vector<std::optional<PositionLogprobs>>& next) {
  const BeamSearchParams& params = options_.params;
  std::vector<BeamSearchSequence> candidates;
  for (size_t i = 0; i < live_.size() && i < next.size(); ++i) {
    BeamSearchSequence& beam = live_[i];
    if (!next[i]) {  // the context is full
      beam.finish_reason = "length";
      finished_.push_back(std::move(beam));
      continue;
    }
    // Candidates in rank order (the most likely first), so that equal scores keep it.
    std::vector<std::pair<int32_t, Logprob>> entries(next[i]->begin(), next[i]->end());
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto& a, const auto& b) { return a.second.rank < b.second.rank; });
    for (const auto& [token_id, logprob] : entries) {
      BeamSearchSequence extended;
      extended.tokens = beam.tokens;
      extended.tokens.push_back(token_id);
      extended.logprobs = beam.logprobs;
      extended.logprobs.push_back(*next[i]);
      extended.cum_logprob = beam.cum_logprob + logprob.logprob;
      if (token_id == options_.eos_token_id && !params.ignore_eos) {
        extended.finish_reason = "stop";
        extended.stop_reason = token_id;
        finished_.push_back(std::move(extended));
      } else if (static_cast<int64_t>(extended.tokens.size()) >= options_.max_model_len) {
        extended.finish_reason = "length";
        candidates.push_back(std::move(extended));
      } else {
        candidates.push_back(std::move(extended));
      }
    }
  }
  Rank(&candidates);
  if (candidates.size() > static_cast<size_t>(params.beam_width)) {
    candidates.resize(params.beam_width);
  }
  // Kept beams that filled the context cannot grow: they are finished.
  live_.clear();
  for (BeamSearchSequence& beam : candidates) {
    (beam.finish_reason.empty() ? live_ : finished_).push_back(std::move(beam));
  }
  ++num_steps_;
}

BeamSearchOutput BeamSearch::Finish() const {
  std::vector<BeamSearchSequence> all = finished_;
  all.insert(all.end(), live_.begin(), live_.end());
  Rank(&all);
  if (all.size() > static_cast<size_t>(options_.params.beam_width)) {
    all.resize(options_.params.beam_width);
  }
  return BeamSearchOutput{std::move(all)};
}

Status RunBeamSearches(std::vector<BeamSearch>* searches, const BeamStepFunction& step) {
  for (;;) {
    // Every live beam of every unfinished search, in one batch.
    std::vector<const std::vector<int32_t>*> sequences;
    std::vector<size_t> search_indices;                       // [sequences.size()]
    std::vector<size_t> first_beam(searches->size() + 1, 0);  // [search] → its first in the batch
    int num_logprobs = 0;
    for (size_t s = 0; s < searches->size(); ++s) {
      const BeamSearch& search = (*searches)[s];
      first_beam[s] = sequences.size();
      if (search.done()) continue;
      num_logprobs = std::max(num_logprobs, search.num_logprobs());
      for (const BeamSearchSequence& beam : search.live_beams()) {
        sequences.push_back(&beam.tokens);
        search_indices.push_back(s);
      }
    }
    first_beam[searches->size()] = sequences.size();
    if (sequences.empty()) return Status::Ok();
    auto next = step(sequences, search_indices, num_logprobs);
    if (!next) return Error{next.error()};
    for (size_t s = 0; s < searches->size(); ++s) {
      if (first_beam[s] == first_beam[s + 1]) continue;
      (*searches)[s].Advance({next->begin() + first_beam[s], next->begin() + first_beam[s + 1]});
    }
  }
}

}  // namespace vllm
