#include "vllm/async_llm.h"

#include <gtest/gtest.h>

#include <thread>

#include "engine/test_engine_args.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

TEST(AsyncLLMTest, ConcurrentStreamsMatchOfflineResults) {
  const std::vector<std::string> prompts = {"Once upon a time", "The dog",     "Lily and Tom",
                                            "One day",          "The sun was", "A little bird"};
  SamplingParams params;
  params.temperature = 0.0f;
  params.max_tokens = 30;
  std::vector<RequestOutput> expected;
  {
    LLM llm(StoriesArgs());
    expected = llm.Generate(prompts, params, false);
  }
  AsyncLLM engine(StoriesArgs());
  params.output_kind = RequestOutputKind::kDelta;
  std::vector<std::string> streamed(prompts.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < prompts.size(); ++i) {
    clients.emplace_back([&, i] {
      auto stream = engine.Generate("request-" + std::to_string(i), prompts[i], params);
      while (auto output = stream->Next()) streamed[i] += output->outputs[0].text;
    });
  }
  for (auto& client : clients) client.join();
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(streamed[i], expected[i].outputs[0].text) << prompts[i];
  }
  EXPECT_EQ(engine.num_running_requests(), 0);
}

TEST(AsyncLLMTest, AbortEndsTheStreamAndFreesItsBlocks) {
  AsyncLLM engine(StoriesArgs());
  const int64_t free_at_start = engine.num_free_kv_blocks();
  SamplingParams params;
  params.max_tokens = 100000;
  params.ignore_eos = true;
  params.output_kind = RequestOutputKind::kDelta;
  auto stream = engine.Generate("long", "Once upon a time", params);
  ASSERT_TRUE(stream->Next().has_value());
  ASSERT_TRUE(stream->Next().has_value());
  engine.Abort("long");
  std::optional<RequestOutput> last;
  while (auto output = stream->Next()) last = std::move(output);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->outputs[0].finish_reason, "abort");
  EXPECT_EQ(engine.num_free_kv_blocks(), free_at_start);
  EXPECT_EQ(engine.num_running_requests(), 0);
}

TEST(AsyncLLMTest, RefusedRequestsThrowWithTheReason) {
  AsyncLLM engine(StoriesArgs());
  SamplingParams params;
  params.top_p = 0.0f;
  EXPECT_THROW(engine.Generate("bad", "x", params), std::invalid_argument);
  SamplingParams ok;
  ok.max_tokens = 2;
  auto stream = engine.Generate("good", "x", ok);
  while (stream->Next()) {
  }
  EXPECT_TRUE(stream->error().empty());
}

}  // namespace
}  // namespace vllm
