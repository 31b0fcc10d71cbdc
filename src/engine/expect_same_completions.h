// Test helper shared by the speculative decoding engine tests: two Generate results agree
// completion by completion in token ids, text and finish reason.
#pragma once

#include <gtest/gtest.h>

#include <vector>

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

}  // namespace vllm
