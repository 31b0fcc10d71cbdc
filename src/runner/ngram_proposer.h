// vLLM's n-gram (prompt lookup) proposer: drafts the next tokens of a sequence by finding its
// last n tokens earlier in prompt + output and proposing what followed them there. No model runs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace vllm {

class NgramProposer {
 public:
  struct Options {
    int num_speculative_tokens = 4;  // k: the most tokens proposed
    int prompt_lookup_min = 1;       // shortest suffix n-gram searched for
    int prompt_lookup_max = 4;       // longest
  };
  explicit NgramProposer(const Options& options) : options_(options) {}

  // Drafts after `token_ids` (prompt + output). Finds the longest n in [min, max] whose last n
  // tokens occur earlier (an occurrence may overlap the suffix but not be it), takes its earliest
  // occurrence, and returns up to k tokens that follow it (fewer when the sequence ends first).
  // Empty when no n-gram matches.
  //
  //   token_ids: a b c d x y z ... a b c
  //              ^^^^^ earliest match of the suffix "a b c"  → draft "d x y z" (k = 4)
  std::vector<int32_t> Propose(std::span<const int32_t> token_ids) const;

 private:
  Options options_;
};

}  // namespace vllm
