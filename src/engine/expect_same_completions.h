// Test helpers shared by the speculative decoding engine tests: two Generate results agree
// completion by completion in token ids, text and finish reason; seeded sampling ignores the batch.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "vllm/llm.h"
#include "vllm/outputs.h"

namespace vllm {

inline void ExpectSameCompletions(const std::vector<RequestOutput>& actual,
                                  const std::vector<RequestOutput>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_EQ(actual[i].outputs.size(), expected[i].outputs.size());
    for (size_t j = 0; j < actual[i].outputs.size(); ++j) {
      const CompletionOutput& a = actual[i].outputs[j];
      const CompletionOutput& e = expected[i].outputs[j];
      EXPECT_EQ(a.token_ids, e.token_ids) << "prompt " << i;
      EXPECT_EQ(a.text, e.text) << "prompt " << i;
      EXPECT_EQ(a.finish_reason, e.finish_reason) << "prompt " << i;
    }
  }
}

// `prompts` sampled with seeded `params` through `first` give each request the tokens it gets
// through `second` in a different batch: behind one more prompt.
inline void ExpectSeededSamplingIgnoresTheBatch(LLM& first, LLM& second,
                                                const std::vector<std::string>& prompts,
                                                const SamplingParams& params) {
  const auto alone = first.Generate(prompts, params, false);
  std::vector<std::string> mixed = prompts;
  mixed.insert(mixed.begin(), "The cat");
  const auto batched = second.Generate(mixed, params, false);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(alone[i].outputs[0].token_ids, batched[i + 1].outputs[0].token_ids) << i;
  }
}

}  // namespace vllm
