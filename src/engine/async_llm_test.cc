#include "vllm/async_llm.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "engine/test_engine_args.h"
#include "structured_output/test_compile_gate.h"
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

// Reads a stream to its end: the concatenated text of sequence 0 and the last output. Gives up
// (with a test failure) after a minute, so an engine thread held up fails the test, not hangs it.
struct StreamEnd {
  std::string text;
  std::optional<RequestOutput> last;
};
StreamEnd ReadToEnd(RequestOutputStream& stream) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  StreamEnd end;
  while (!stream.done()) {
    if (std::chrono::steady_clock::now() > give_up) {
      ADD_FAILURE() << "the stream did not end within a minute";
      return end;
    }
    auto output = stream.TryNext();
    if (!output) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    if (!output->outputs.empty()) end.text += output->outputs[0].text;
    end.last = std::move(output);
  }
  return end;
}

SamplingParams WithRegex(const std::string& regex, int max_tokens = 16) {
  SamplingParams params = Greedy(max_tokens);
  params.output_kind = RequestOutputKind::kDelta;
  params.structured_outputs = StructuredOutputsParams{.regex = regex};
  return params;
}

TEST(AsyncLLMTest, ConstraintCompilesWithoutHoldingUpOtherRequests) {
  TestCompileGate gate("(ab)+");  // holds that constraint's compile until released
  AsyncLLM engine(StoriesArgs());
  TestCompileGate::ReleaseAtExit release_at_exit{gate};
  auto held = engine.Submit("held", "Once", WithRegex("(ab)+"), {}, {});
  gate.WaitForEntered();
  // While that compile is under way: a plain request is admitted and runs to its end, a long
  // stream steps to its end, and another constraint compiles on the other thread and completes.
  auto plain = engine.Submit("plain", "The dog", Greedy(4), {}, {});
  SamplingParams long_params = Greedy(200);
  long_params.ignore_eos = true;
  long_params.output_kind = RequestOutputKind::kDelta;
  auto long_stream = engine.Submit("long", "Once upon a time", long_params, {}, {});
  auto other = engine.Submit("other", "Lily", WithRegex("(cd)+"), {}, {});
  StreamEnd plain_end = ReadToEnd(*plain);
  ASSERT_TRUE(plain_end.last.has_value()) << plain->error();
  EXPECT_EQ(plain_end.last->outputs[0].finish_reason, "length");
  StreamEnd long_end = ReadToEnd(*long_stream);
  ASSERT_TRUE(long_end.last.has_value()) << long_stream->error();
  EXPECT_EQ(long_end.last->outputs[0].finish_reason, "length");
  StreamEnd other_end = ReadToEnd(*other);
  ASSERT_TRUE(other_end.last.has_value()) << other->error();
  EXPECT_THAT(other_end.text, ::testing::MatchesRegex("(cd)+"));
  EXPECT_EQ(engine.stats().num_waiting, 1);  // the held request, waiting for its grammar
  EXPECT_FALSE(held->done());
  gate.Release();
  StreamEnd held_end = ReadToEnd(*held);
  ASSERT_TRUE(held_end.last.has_value()) << held->error();
  EXPECT_THAT(held_end.text, ::testing::MatchesRegex("(ab)+"));
}

TEST(AsyncLLMTest, AbortWhileCompilingEndsTheStreamAtOnce) {
  TestCompileGate gate("(ab)+");
  AsyncLLM engine(StoriesArgs());
  TestCompileGate::ReleaseAtExit release_at_exit{gate};
  SamplingParams params = WithRegex("(ab)+");
  params.n = 2;
  auto stream = engine.Submit("held", std::vector<int32_t>{1, 2, 3}, params, {}, {});
  gate.WaitForEntered();
  engine.Abort("held");
  StreamEnd end = ReadToEnd(*stream);  // with the compile still held
  ASSERT_TRUE(end.last.has_value()) << stream->error();
  EXPECT_TRUE(end.last->finished);
  EXPECT_EQ(end.last->prompt_token_ids, (std::vector<int32_t>{1, 2, 3}));
  ASSERT_EQ(end.last->outputs.size(), 2u);
  for (const CompletionOutput& output : end.last->outputs) {
    EXPECT_EQ(output.finish_reason, "abort");
  }
  gate.Release();  // the cancelled compile ends; the request never reaches the engine
  EXPECT_EQ(engine.num_running_requests(), 0);
  EXPECT_EQ(engine.stats().num_waiting, 0);
}

TEST(AsyncLLMTest, ConstraintsOverTheLimitsAreRefusedByName) {
  EngineArgs args = StoriesArgs();
  args.structured_outputs_max_bytes = 1000;
  args.structured_outputs_compile_timeout = 0.05;
  // The compile of "slow+" spends more CPU time than the limit: no race with the machine's speed.
  SetStructuredOutputCompileHookForTesting([](const StructuredOutputsParams& params) {
    if (params.regex == "slow+") BurnCpuSeconds(0.1);
  });
  AsyncLLM engine(args);
  const std::vector<std::pair<SamplingParams, std::string>> refused = {
      {WithRegex(std::string(1001, 'a')),
       "more than the 1000 allowed (--structured-outputs-max-bytes)"},
      {WithRegex("slow+"),
       "took more than 0.05 s of CPU time to compile (--structured-outputs-compile-timeout)"},
  };
  for (const auto& [params, message] : refused) {
    auto stream = engine.Submit("refused", "Once", params, {}, {});
    EXPECT_FALSE(ReadToEnd(*stream).last.has_value());
    EXPECT_TRUE(stream->rejected());
    EXPECT_FALSE(stream->overloaded());
    EXPECT_THAT(stream->error(), ::testing::HasSubstr(message));
    try {
      engine.Generate("refused", "Once", params);
      ADD_FAILURE() << "Generate accepted " << message;
    } catch (const std::invalid_argument& error) {
      EXPECT_THAT(error.what(), ::testing::HasSubstr(message));
    }
  }
  SetStructuredOutputCompileHookForTesting({});
  auto plain = engine.Submit("plain", "Once", Greedy(2), {}, {});
  EXPECT_TRUE(ReadToEnd(*plain).last.has_value()) << plain->error();
  // The offline engine compiles on the caller's thread, within the same limits.
  LLM llm(args);
  try {
    llm.Generate({"Once"}, WithRegex(std::string(1001, 'a')), false);
    ADD_FAILURE() << "LLM accepted a constraint over --structured-outputs-max-bytes";
  } catch (const std::invalid_argument& error) {
    EXPECT_THAT(error.what(), ::testing::HasSubstr("--structured-outputs-max-bytes"));
  }
}

}  // namespace
}  // namespace vllm
