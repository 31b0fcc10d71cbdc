// MergeDelta: a non-streamed response gathers every delta whole; a stream, which sends each delta
// as it comes, keeps only their state, so its memory does not grow with the output.
#include "server/openai/generation_job.h"

#include <gtest/gtest.h>

namespace vllm::server {
namespace {

RequestOutput Delta(int32_t token_id, bool finished) {
  CompletionOutput part;
  part.index = 1;  // sequence 0 finished earlier: a delta may skip it
  part.text = "t" + std::to_string(token_id);
  part.token_ids = {token_id};
  part.logprobs = std::vector<PositionLogprobs>{{{token_id, Logprob{-1.0f, 1, part.text}}}};
  part.cumulative_logprob = -1.0 * token_id;
  if (finished) part.finish_reason = "length";
  RequestOutput delta;
  delta.request_id = "r";
  delta.prompt_token_ids = {1, 2};
  delta.finished = finished;
  delta.outputs = {part};
  return delta;
}

TEST(MergeDeltaTest, StreamsKeepOnlyTheState) {
  RequestOutput whole;
  RequestOutput state;
  for (int32_t token_id = 1; token_id <= 3; ++token_id) {
    MergeDelta(Delta(token_id, token_id == 3), &whole, /*with_contents=*/true);
    MergeDelta(Delta(token_id, token_id == 3), &state, /*with_contents=*/false);
  }
  ASSERT_EQ(whole.outputs.size(), 2u);
  EXPECT_EQ(whole.outputs[1].text, "t1t2t3");
  EXPECT_EQ(whole.outputs[1].token_ids, (std::vector<int32_t>{1, 2, 3}));
  ASSERT_TRUE(whole.outputs[1].logprobs.has_value());
  EXPECT_EQ(whole.outputs[1].logprobs->size(), 3u);
  ASSERT_EQ(state.outputs.size(), 2u);
  EXPECT_TRUE(state.outputs[1].text.empty());
  EXPECT_TRUE(state.outputs[1].token_ids.empty());
  EXPECT_FALSE(state.outputs[1].logprobs.has_value());
  for (const RequestOutput* merged : {&whole, &state}) {
    EXPECT_TRUE(merged->finished);
    EXPECT_EQ(merged->outputs[1].finish_reason, "length");
    EXPECT_DOUBLE_EQ(merged->outputs[1].cumulative_logprob, -3.0);
    EXPECT_EQ(merged->prompt_token_ids, (std::vector<int32_t>{1, 2}));
  }
}

}  // namespace
}  // namespace vllm::server
