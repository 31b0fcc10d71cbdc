#include "runner/ngram_proposer.h"

#include <algorithm>

namespace vllm {

std::vector<int32_t> NgramProposer::Propose(std::span<const int32_t> token_ids) const {
  const auto num_tokens = static_cast<int64_t>(token_ids.size());
  const int64_t longest = std::min<int64_t>(options_.prompt_lookup_max, num_tokens - 1);
  for (int64_t n = longest; n >= options_.prompt_lookup_min; --n) {
    const std::span<const int32_t> suffix = token_ids.last(n);
    // An occurrence starting at `start` ends before the last token, so a token follows it.
    for (int64_t start = 0; start + n < num_tokens; ++start) {
      if (!std::equal(suffix.begin(), suffix.end(), token_ids.begin() + start)) continue;
      const int64_t draft_begin = start + n;
      const int64_t draft_end =
          std::min<int64_t>(draft_begin + options_.num_speculative_tokens, num_tokens);
      return {token_ids.begin() + draft_begin, token_ids.begin() + draft_end};
    }
  }
  return {};
}

}  // namespace vllm
