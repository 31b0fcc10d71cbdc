// Speculative decoding counters, cumulative over the engine's life (vLLM's SpecDecodingStats,
// exported as vllm:spec_decode_* and logged as its "SpecDecoding metrics" line).
#pragma once

#include <cstdint>
#include <vector>

namespace vllm {

struct SpecDecodingStats {
  int64_t num_drafts = 0;           // requests that verified drafts, summed over steps
  int64_t num_draft_tokens = 0;     // draft tokens verified
  int64_t num_accepted_tokens = 0;  // draft tokens accepted
  std::vector<int64_t> num_accepted_tokens_per_pos;  // [num_speculative_tokens]

  // One request's step: num_draft_tokens verified, the first num_accepted_tokens accepted.
  void Observe(int64_t num_draft, int64_t num_accepted) {
    ++num_drafts;
    num_draft_tokens += num_draft;
    num_accepted_tokens += num_accepted;
    if (static_cast<int64_t>(num_accepted_tokens_per_pos.size()) < num_draft) {
      num_accepted_tokens_per_pos.resize(num_draft);
    }
    for (int64_t position = 0; position < num_accepted; ++position) {
      ++num_accepted_tokens_per_pos[position];
    }
  }
  // vLLM's mean acceptance length: 1 + accepted / drafts (the token sampled after the drafts
  // counts); 0 before any draft.
  double mean_acceptance_length() const {
    return num_drafts == 0
               ? 0.0
               : 1.0 + static_cast<double>(num_accepted_tokens) / static_cast<double>(num_drafts);
  }
};

}  // namespace vllm
