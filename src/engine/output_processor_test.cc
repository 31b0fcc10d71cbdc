// OutputProcessor's output kinds with logprobs: a delta output hands over only the new positions
// and the processor keeps none it returned, so a step's work and memory do not grow with the
// output's length; cumulative and final-only outputs still hold every position.
#include "engine/output_processor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "engine/llm_engine.h"
#include "engine/test_engine_args.h"

namespace vllm {
namespace {

constexpr int kNumTopLogprobs = 3;

// One generated token with its logprobs and kNumTopLogprobs others.
EngineCoreOutput Step(const std::string& child_id, int32_t token_id,
                      RequestStatus status = RequestStatus::kRunning) {
  TokenLogprobs logprobs{.token_id = token_id, .logprob = -0.5f, .rank = 1};
  for (int32_t k = 0; k < kNumTopLogprobs; ++k) {
    logprobs.top.emplace_back(token_id + k, -0.5f - static_cast<float>(k));
  }
  return {.request_id = child_id,
          .new_token_ids = {token_id},
          .new_logprobs = {logprobs},
          .status = status};
}

class OutputProcessorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto engine = LLMEngine::Create(StoriesArgs());
    ASSERT_TRUE(engine.ok()) << engine.error();
    engine_ = std::move(*engine).release();
  }
  static void TearDownTestSuite() { delete engine_; }

  // Runs a request of two sequences for kNumSteps steps (the last one ends both); returns every
  // output and checks what the processor holds after each step with `check_held`.
  template <typename CheckHeld>
  std::vector<RequestOutput> Run(RequestOutputKind kind, CheckHeld check_held) {
    OutputProcessor processor(engine_->tokenizer());
    SamplingParams params;
    params.n = 2;
    params.logprobs = kNumTopLogprobs;
    params.output_kind = kind;
    processor.AddRequest("r", "p", {1, 2}, params, {"r-0", "r-1"});
    std::vector<RequestOutput> outputs;
    std::vector<std::string> stopped;
    for (int step = 1; step <= kNumSteps; ++step) {
      const RequestStatus status =
          step == kNumSteps ? RequestStatus::kFinishedLengthCapped : RequestStatus::kRunning;
      const int32_t token_id = 10 + step;
      for (auto& output : processor.Process(
               {Step("r-0", token_id, status), Step("r-1", token_id, status)}, &stopped)) {
        outputs.push_back(std::move(output));
      }
      check_held(step, processor.NumHeldLogprobPositions());
    }
    EXPECT_FALSE(processor.Has("r"));
    EXPECT_EQ(processor.NumHeldLogprobPositions(), 0u);  // the finished request let go
    return outputs;
  }

  static constexpr int kNumSteps = 40;
  static LLMEngine* engine_;
};

LLMEngine* OutputProcessorTest::engine_ = nullptr;

TEST_F(OutputProcessorTest, DeltaOutputsHandOverTheNewPositionsAndKeepNone) {
  const auto outputs = Run(RequestOutputKind::kDelta,
                           [](int step, size_t held) { EXPECT_EQ(held, 0u) << "step " << step; });
  ASSERT_EQ(outputs.size(), static_cast<size_t>(kNumSteps));
  for (size_t step = 0; step < outputs.size(); ++step) {
    ASSERT_EQ(outputs[step].outputs.size(), 2u);
    for (const CompletionOutput& part : outputs[step].outputs) {
      const int32_t token_id = 10 + static_cast<int32_t>(step) + 1;
      ASSERT_EQ(part.token_ids, std::vector<int32_t>{token_id});
      ASSERT_TRUE(part.logprobs.has_value());
      ASSERT_EQ(part.logprobs->size(), 1u) << "step " << step;
      EXPECT_EQ(part.logprobs->front().size(), static_cast<size_t>(kNumTopLogprobs));
      EXPECT_EQ(part.logprobs->front().at(token_id).rank, 1);
      EXPECT_NEAR(part.cumulative_logprob, -0.5 * static_cast<double>(step + 1), 1e-6);
    }
  }
  EXPECT_EQ(outputs.back().outputs[0].finish_reason, "length");
}

TEST_F(OutputProcessorTest, CumulativeAndFinalOnlyOutputsHoldEveryPosition) {
  const auto cumulative = Run(RequestOutputKind::kCumulative, [](int step, size_t held) {
    if (step < kNumSteps) {
      EXPECT_EQ(held, 2u * step);
    }
  });
  ASSERT_EQ(cumulative.size(), static_cast<size_t>(kNumSteps));
  for (size_t step = 0; step < cumulative.size(); ++step) {
    for (const CompletionOutput& whole : cumulative[step].outputs) {
      EXPECT_EQ(whole.token_ids.size(), step + 1);
      EXPECT_EQ(whole.logprobs->size(), step + 1);
    }
  }
  const auto final_only = Run(RequestOutputKind::kFinalOnly, [](int, size_t) {});
  ASSERT_EQ(final_only.size(), 1u);
  ASSERT_EQ(final_only[0].outputs.size(), 2u);
  for (const CompletionOutput& whole : final_only[0].outputs) {
    EXPECT_EQ(whole.token_ids.size(), static_cast<size_t>(kNumSteps));
    ASSERT_EQ(whole.logprobs->size(), static_cast<size_t>(kNumSteps));
    EXPECT_EQ(whole.logprobs->back().count(10 + kNumSteps), 1u);
  }
}

// The final output times the request's phases by its steps (vLLM's prefill and decode times):
// the first token came 20 ms after it was scheduled, the last 30 ms after the first.
TEST_F(OutputProcessorTest, FinalOutputTimesPrefillAndDecode) {
  OutputProcessor processor(engine_->tokenizer());
  processor.AddRequest("r", "p", {1, 2}, SamplingParams(), {"r"});
  std::vector<std::string> stopped;
  EngineCoreOutput first = Step("r", 11);
  first.queue_seconds = 0.0;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto outputs = processor.Process({first}, &stopped);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_FALSE(outputs[0].prefill_seconds.has_value());  // not finished yet
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  outputs = processor.Process({Step("r", 12, RequestStatus::kFinishedLengthCapped)}, &stopped);
  ASSERT_EQ(outputs.size(), 1u);
  ASSERT_TRUE(outputs[0].prefill_seconds.has_value());
  EXPECT_GE(*outputs[0].prefill_seconds, 0.020);
  EXPECT_GE(*outputs[0].decode_seconds, 0.030);
}

}  // namespace
}  // namespace vllm
