// Scheduler tests with fake requests and no model: budgets, chunked prefill, preemption,
// admission limits, stop conditions, abort.
#include "sched/scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>

namespace vllm {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Request> MakeRequest(const std::string& id, int num_prompt_tokens,
                                     int max_tokens = 16, int first_token = 0) {
  auto request = std::make_unique<Request>();
  request->request_id = id;
  request->prompt_token_ids.resize(num_prompt_tokens);
  std::iota(request->prompt_token_ids.begin(), request->prompt_token_ids.end(), first_token);
  request->params.max_tokens = max_tokens;
  request->eos_token_id = 2;
  return request;
}

// Samples token 7 for every request whose prompt is complete after this step; [scheduled].
std::vector<std::vector<int32_t>> SampleAll(const SchedulerOutput& output, int32_t token = 7) {
  std::vector<std::vector<int32_t>> sampled;
  for (const auto& s : output.scheduled) {
    const bool reaches_end =
        s.request->num_computed_tokens + s.num_new_tokens >= s.request->num_tokens();
    sampled.push_back(reaches_end ? std::vector<int32_t>{token} : std::vector<int32_t>{});
  }
  return sampled;
}

// Scheduler::Update for tests that do not look at the sampled tokens it keeps.
std::vector<std::unique_ptr<Request>> Update(Scheduler& scheduler, const SchedulerOutput& output,
                                             std::vector<std::vector<int32_t>> sampled) {
  return scheduler.Update(output, sampled);
}

std::map<std::string, int64_t> Counts(const SchedulerOutput& output) {
  std::map<std::string, int64_t> counts;
  for (const auto& s : output.scheduled) counts[s.request->request_id] = s.num_new_tokens;
  return counts;
}

TEST(SchedulerTest, SplitsOneTokenBudgetRunningFirst) {
  KvCacheManager kv({.num_blocks = 100, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 10, .max_model_len = 100}, kv);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", 6)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", 8)).ok());
  auto first = scheduler.Schedule();
  // a's whole prompt, then the first 4 tokens of b's (chunked prefill).
  EXPECT_EQ(Counts(first), (std::map<std::string, int64_t>{{"a", 6}, {"b", 4}}));
  Update(scheduler, first, SampleAll(first));
  auto second = scheduler.Schedule();
  // a decodes one token, b finishes its prompt.
  EXPECT_EQ(Counts(second), (std::map<std::string, int64_t>{{"a", 1}, {"b", 4}}));
  EXPECT_EQ(second.total_num_scheduled_tokens, 5);
  auto sampled = SampleAll(second);
  EXPECT_TRUE(scheduler.Update(second, sampled).empty());
  EXPECT_EQ(sampled, (std::vector<std::vector<int32_t>>{{7}, {7}}));
  EXPECT_EQ(scheduler.Find("b")->num_output_tokens(), 1);
  EXPECT_EQ(scheduler.Find("a")->num_output_tokens(), 2);
}

TEST(SchedulerTest, RespectsMaxNumSeqs) {
  KvCacheManager kv({.num_blocks = 100, .block_size = 4});
  Scheduler scheduler({.max_num_seqs = 2, .max_num_batched_tokens = 100, .max_model_len = 100}, kv);
  for (auto id : {"a", "b", "c"}) ASSERT_TRUE(scheduler.AddRequest(MakeRequest(id, 3)).ok());
  auto output = scheduler.Schedule();
  EXPECT_EQ(output.scheduled.size(), 2u);
  EXPECT_EQ(scheduler.num_waiting(), 1);
}

TEST(SchedulerTest, RefusesPromptsThatDoNotFit) {
  KvCacheManager kv({.num_blocks = 100, .block_size = 4});
  Scheduler scheduler({.max_model_len = 10}, kv);
  Status status = scheduler.AddRequest(MakeRequest("a", 10));
  EXPECT_THAT(status.message(), HasSubstr("maximum context length is 10 tokens"));
  EXPECT_THAT(status.message(), HasSubstr("10 input tokens"));
  EXPECT_FALSE(scheduler.AddRequest(MakeRequest("b", 0)).ok());
  EXPECT_TRUE(scheduler.AddRequest(MakeRequest("c", 9)).ok());
}

TEST(SchedulerTest, StopsAtMaxTokensEosAndMaxModelLen) {
  KvCacheManager kv({.num_blocks = 100, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 100, .max_model_len = 6}, kv);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("max_tokens", 2, /*max_tokens=*/2)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("model_len", 4, 100)).ok());
  auto min_tokens = MakeRequest("eos", 3, 100);
  min_tokens->params.min_tokens = 1;
  ASSERT_TRUE(scheduler.AddRequest(std::move(min_tokens)).ok());
  std::map<std::string, std::string> reasons;
  for (int step = 0; step < 5 && scheduler.HasUnfinishedRequests(); ++step) {
    auto output = scheduler.Schedule();
    // EOS (2) on the eos request's second output token; min_tokens = 1 lets it stop there.
    std::vector<std::vector<int32_t>> sampled = SampleAll(output);
    for (size_t i = 0; i < sampled.size(); ++i) {
      const Request& request = *output.scheduled[i].request;
      if (request.request_id == "eos" && request.num_output_tokens() == 1) sampled[i] = {2};
    }
    for (auto& done : Update(scheduler, output, sampled)) {
      reasons[done->request_id] = FinishReason(done->status);
      if (done->request_id == "max_tokens") {
        EXPECT_EQ(done->num_output_tokens(), 2);
      }
      if (done->request_id == "model_len") {
        EXPECT_EQ(done->num_tokens(), 6);
      }
      if (done->request_id == "eos") {
        EXPECT_EQ(done->num_output_tokens(), 2);
      }
    }
  }
  EXPECT_EQ(reasons, (std::map<std::string, std::string>{
                         {"max_tokens", "length"}, {"model_len", "length"}, {"eos", "stop"}}));
  EXPECT_EQ(kv.num_free_blocks(), 100);
}

TEST(SchedulerTest, StopTokenIdsAndMinTokens) {
  KvCacheManager kv({.num_blocks = 100, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 100, .max_model_len = 100}, kv);
  auto request = MakeRequest("a", 3, 100);
  request->params.stop_token_ids = {7};
  request->params.min_tokens = 3;
  ASSERT_TRUE(scheduler.AddRequest(std::move(request)).ok());
  std::unique_ptr<Request> done;
  for (int step = 0; step < 10 && !done; ++step) {
    auto output = scheduler.Schedule();
    auto finished = Update(scheduler, output, SampleAll(output, 7));
    if (!finished.empty()) done = std::move(finished[0]);
  }
  ASSERT_TRUE(done);
  EXPECT_EQ(done->num_output_tokens(), 3);  // 7 is ignored until min_tokens are out
  EXPECT_EQ(done->stop_token_id, 7);
}

TEST(SchedulerTest, PreemptsTheLatestRequestWhenBlocksRunOut) {
  // 4 blocks of 4 tokens: two requests of 8 prompt tokens fit (2 blocks each) until a needs a
  // third block for its 9th token; then b, admitted last, is preempted and later recomputed.
  KvCacheManager kv({.num_blocks = 4, .block_size = 4, .enable_prefix_caching = false});
  Scheduler scheduler({.max_num_batched_tokens = 100, .max_model_len = 100}, kv);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", 8, 3)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", 8, 3, 100)).ok());
  auto first = scheduler.Schedule();
  EXPECT_EQ(first.scheduled.size(), 2u);
  Update(scheduler, first, SampleAll(first));  // both now hold 9 tokens
  auto second = scheduler.Schedule();          // a needs a 3rd block: b is preempted
  EXPECT_EQ(second.preempted_request_ids, std::vector<std::string>{"b"});
  EXPECT_EQ(Counts(second), (std::map<std::string, int64_t>{{"a", 1}}));
  EXPECT_EQ(scheduler.num_preemptions(), 1);
  EXPECT_EQ(scheduler.Find("b")->num_computed_tokens, 0);
  EXPECT_EQ(scheduler.Find("b")->status, RequestStatus::kPreempted);
  Update(scheduler, second, SampleAll(second));
  std::vector<std::unique_ptr<Request>> finished;
  for (int step = 0; step < 10 && scheduler.HasUnfinishedRequests(); ++step) {
    auto output = scheduler.Schedule();
    for (auto& done : Update(scheduler, output, SampleAll(output))) {
      finished.push_back(std::move(done));
    }
  }
  ASSERT_EQ(finished.size(), 2u);
  for (const auto& done : finished) EXPECT_EQ(done->num_output_tokens(), 3);
  EXPECT_EQ(kv.num_free_blocks(), 4);
}

// The time from arrival to first scheduling is recorded once: not again when a preempted request
// is scheduled anew.
TEST(SchedulerTest, RecordsTheQueueTimeOnFirstSchedulingOnly) {
  KvCacheManager kv({.num_blocks = 4, .block_size = 4, .enable_prefix_caching = false});
  Scheduler scheduler({.max_num_batched_tokens = 100, .max_model_len = 100}, kv);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", 8, 3)).ok());
  auto waited = MakeRequest("b", 8, 3, 100);
  waited->arrival_time -= std::chrono::seconds(5);
  ASSERT_TRUE(scheduler.AddRequest(std::move(waited)).ok());
  EXPECT_FALSE(scheduler.Find("b")->queue_seconds.has_value());
  auto first = scheduler.Schedule();
  ASSERT_EQ(first.scheduled.size(), 2u);
  EXPECT_GE(first.scheduled[0].request->queue_seconds.value_or(-1), 0.0);
  EXPECT_GE(first.scheduled[1].request->queue_seconds.value_or(-1), 5.0);
  for (const auto& s : first.scheduled) s.request->queue_seconds.reset();  // as a step takes it
  Update(scheduler, first, SampleAll(first));
  auto second = scheduler.Schedule();  // b is preempted
  ASSERT_EQ(second.preempted_request_ids, std::vector<std::string>{"b"});
  Update(scheduler, second, SampleAll(second));
  bool b_scheduled_again = false;
  for (int step = 0; step < 10 && scheduler.HasUnfinishedRequests(); ++step) {
    auto output = scheduler.Schedule();
    for (const auto& s : output.scheduled) {
      b_scheduled_again |= s.request->request_id == "b";
      EXPECT_FALSE(s.request->queue_seconds.has_value()) << s.request->request_id;
    }
    Update(scheduler, output, SampleAll(output));
  }
  EXPECT_TRUE(b_scheduled_again);
}

TEST(SchedulerTest, AbortReturnsEveryBlock) {
  KvCacheManager kv({.num_blocks = 20, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 100, .max_model_len = 100}, kv);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", 9)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", 30)).ok());
  auto output = scheduler.Schedule();
  Update(scheduler, output, SampleAll(output));
  EXPECT_LT(kv.num_free_blocks(), 20);
  std::vector<std::string> ids = {"a", "b", "unknown"};
  auto aborted = scheduler.FinishRequests(ids, RequestStatus::kFinishedAborted);
  ASSERT_EQ(aborted.size(), 2u);
  EXPECT_STREQ(FinishReason(aborted[0]->status), "abort");
  EXPECT_EQ(kv.num_free_blocks(), 20);
  EXPECT_FALSE(scheduler.HasUnfinishedRequests());
}

TEST(SchedulerTest, PriorityPolicyAdmitsLowerValuesFirst) {
  KvCacheManager kv({.num_blocks = 100, .block_size = 4});
  Scheduler scheduler({.max_num_seqs = 1,
                       .max_num_batched_tokens = 100,
                       .max_model_len = 100,
                       .policy = SchedulingPolicy::kPriority},
                      kv);
  auto low = MakeRequest("low", 3);
  low->priority = 5;
  auto high = MakeRequest("high", 3);
  high->priority = -1;
  ASSERT_TRUE(scheduler.AddRequest(std::move(low)).ok());
  ASSERT_TRUE(scheduler.AddRequest(std::move(high)).ok());
  auto output = scheduler.Schedule();
  ASSERT_EQ(output.scheduled.size(), 1u);
  EXPECT_EQ(output.scheduled[0].request->request_id, "high");
}

TEST(SchedulerTest, SecondRequestWithSharedPrefixComputesOnlyItsSuffix) {
  KvCacheManager kv({.num_blocks = 100, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 100, .max_model_len = 100}, kv);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", 20, 1)).ok());
  auto first = scheduler.Schedule();
  Update(scheduler, first, SampleAll(first));
  auto second_request = MakeRequest("b", 23, 1);  // same first 20 tokens, 3 more
  ASSERT_TRUE(scheduler.AddRequest(std::move(second_request)).ok());
  auto second = scheduler.Schedule();
  EXPECT_EQ(Counts(second), (std::map<std::string, int64_t>{{"b", 3}}));
  EXPECT_EQ(kv.stats().prefix_cache_hits, 20);
}

TEST(SchedulerTest, HandsOutOneBlockTablePerKvCacheGroup) {
  // A full group and a sliding one (W = 4, block size 4): a decoding request holds every block of
  // the first and at most 2 of the second; the prefix hit of a second request covers both.
  KvCacheManager kv({.num_blocks = 40, .block_size = 4, .groups = {{}, {.sliding_window = 4}}});
  Scheduler scheduler({.max_num_batched_tokens = 100, .max_model_len = 100}, kv);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", 10, /*max_tokens=*/20)).ok());
  for (int step = 0; step < 20; ++step) {
    auto output = scheduler.Schedule();
    ASSERT_EQ(output.scheduled.size(), 1u);
    const ScheduledRequest& a = output.scheduled[0];
    const int64_t num_tokens = a.request->num_computed_tokens + a.num_new_tokens;
    ASSERT_EQ(a.block_tables.size(), 2u);
    EXPECT_EQ(static_cast<int64_t>(a.block_tables[0].size()), (num_tokens + 3) / 4);
    EXPECT_EQ(a.block_tables[1].size(), a.block_tables[0].size());
    if (step > 0) {
      EXPECT_LE(kv.num_held_blocks("a"), (num_tokens + 3) / 4 + 2) << step;
    }
    Update(scheduler, output, SampleAll(output, 9));
  }
  EXPECT_FALSE(scheduler.HasUnfinishedRequests());
  EXPECT_EQ(kv.num_free_blocks(), 39);  // all but the null block
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", 10)).ok());
  auto output = scheduler.Schedule();
  EXPECT_EQ(scheduler.Find("b")->num_computed_tokens, 8);
  EXPECT_EQ(output.scheduled[0].num_new_tokens, 2);
}

// Speculative decoding: a request with drafts asks for its next token plus the drafts, and
// Update keeps the KV of accepted drafts only.
TEST(SchedulerTest, SchedulesDraftsAfterTheLastTokenAndRollsBackRejectedOnes) {
  KvCacheManager kv({.num_blocks = 100, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 100, .max_model_len = 100}, kv);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", 6)).ok());
  auto first = scheduler.Schedule();
  Update(scheduler, first, SampleAll(first));  // output [7]
  scheduler.UpdateDraftTokens("a", {8, 9, 10});
  auto second = scheduler.Schedule();
  ASSERT_EQ(second.scheduled.size(), 1u);
  EXPECT_EQ(second.scheduled[0].num_new_tokens, 4);  // token 7 and three drafts
  EXPECT_EQ(second.scheduled[0].spec_token_ids, (std::vector<int32_t>{8, 9, 10}));
  EXPECT_TRUE(scheduler.Find("a")->spec_token_ids.empty());
  // 8 accepted, 9 rejected and replaced by 11.
  std::vector<std::vector<int32_t>> sampled = {{8, 11}};
  EXPECT_TRUE(scheduler.Update(second, sampled).empty());
  EXPECT_EQ(sampled[0], (std::vector<int32_t>{8, 11}));
  const Request* a = scheduler.Find("a");
  EXPECT_EQ(a->output_token_ids, (std::vector<int32_t>{7, 8, 11}));
  EXPECT_EQ(a->num_computed_tokens, 8);  // prompt, 7 and 8; 11 is computed next
  auto third = scheduler.Schedule();
  EXPECT_EQ(third.scheduled[0].num_new_tokens, 1);
  EXPECT_TRUE(third.scheduled[0].spec_token_ids.empty());
}

TEST(SchedulerTest, DraftsAreCappedByMaxTokensMaxModelLenAndTheBudget) {
  KvCacheManager kv({.num_blocks = 100, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 100, .max_model_len = 10}, kv);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("max_tokens", 3, /*max_tokens=*/3)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("model_len", 6, /*max_tokens=*/100)).ok());
  auto first = scheduler.Schedule();
  Update(scheduler, first, SampleAll(first));
  scheduler.UpdateDraftTokens("max_tokens", {1, 1, 1, 1});
  scheduler.UpdateDraftTokens("model_len", {1, 1, 1, 1});
  auto second = scheduler.Schedule();
  // One output token so far: room for two more, the draft and the token after it.
  EXPECT_EQ(second.scheduled[0].spec_token_ids.size(), 1u);
  // 7 tokens: the drafts may reach position 8 = max_model_len - 2, the bonus token 9.
  EXPECT_EQ(second.scheduled[1].spec_token_ids.size(), 2u);

  KvCacheManager small_kv({.num_blocks = 100, .block_size = 4});
  Scheduler small_budget({.max_num_batched_tokens = 3, .max_model_len = 100}, small_kv);
  ASSERT_TRUE(small_budget.AddRequest(MakeRequest("a", 3)).ok());
  auto prefill = small_budget.Schedule();
  Update(small_budget, prefill, SampleAll(prefill));
  small_budget.UpdateDraftTokens("a", {4, 5, 6, 7});
  auto decode = small_budget.Schedule();
  EXPECT_EQ(decode.scheduled[0].num_new_tokens, 3);
  EXPECT_EQ(decode.scheduled[0].spec_token_ids, (std::vector<int32_t>{4, 5}));
}

TEST(SchedulerTest, AStopAmongAcceptedTokensDropsTheRest) {
  KvCacheManager kv({.num_blocks = 100, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 100, .max_model_len = 100}, kv);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("eos", 3)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("length", 3, /*max_tokens=*/3)).ok());
  auto first = scheduler.Schedule();
  Update(scheduler, first, SampleAll(first));
  scheduler.UpdateDraftTokens("eos", {8, 2, 9});
  scheduler.UpdateDraftTokens("length", {8, 9, 10});
  auto second = scheduler.Schedule();
  std::vector<std::vector<int32_t>> sampled = {{8, 2, 9, 5}, {8, 9}};
  auto finished = scheduler.Update(second, sampled);
  ASSERT_EQ(finished.size(), 2u);
  EXPECT_EQ(finished[0]->output_token_ids, (std::vector<int32_t>{7, 8, 2}));
  EXPECT_EQ(finished[0]->status, RequestStatus::kFinishedStopped);
  EXPECT_EQ(finished[1]->output_token_ids, (std::vector<int32_t>{7, 8, 9}));
  EXPECT_EQ(finished[1]->status, RequestStatus::kFinishedLengthCapped);
  // Each entry is left holding the request's new tokens of the step.
  EXPECT_EQ(sampled, (std::vector<std::vector<int32_t>>{{8, 2}, {8, 9}}));
}

TEST(SchedulerTest, ABlockHoldingARejectedDraftIsNotCached) {
  KvCacheManager kv({.num_blocks = 100, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 100, .max_model_len = 100}, kv);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", 6)).ok());  // prompt 0..5
  auto first = scheduler.Schedule();
  Update(scheduler, first, SampleAll(first));  // output [7]
  // Draft 8 lands at position 7, filling block 1; it is rejected for 11.
  scheduler.UpdateDraftTokens("a", {8, 9});
  auto second = scheduler.Schedule();
  Update(scheduler, second, {{11}});
  // Block 1 would read [4 5 7 11] but its KV at position 7 is the rejected draft's.
  const std::vector<int32_t> accepted = {0, 1, 2, 3, 4, 5, 7, 11, 20};
  EXPECT_EQ(kv.GetComputedBlocks(accepted, {}).num_computed_tokens, 4);
  // Once position 7 is computed with 11, the block is cached.
  auto third = scheduler.Schedule();
  Update(scheduler, third, SampleAll(third));
  EXPECT_EQ(kv.GetComputedBlocks(accepted, {}).num_computed_tokens, 8);
}

TEST(SchedulerTest, PreemptionDropsTheDrafts) {
  // Four blocks of 4: two prompts of 7 fill them; b's drafts need a fifth, so b is preempted.
  KvCacheManager kv({.num_blocks = 4, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 100, .max_model_len = 100}, kv);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", 7)).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", 7)).ok());
  auto first = scheduler.Schedule();
  Update(scheduler, first, SampleAll(first));
  scheduler.UpdateDraftTokens("b", {8, 9});
  auto second = scheduler.Schedule();
  EXPECT_EQ(second.preempted_request_ids, (std::vector<std::string>{"b"}));
  EXPECT_TRUE(scheduler.Find("b")->spec_token_ids.empty());
  scheduler.UpdateDraftTokens("b", {8, 9});  // waiting: ignored
  EXPECT_TRUE(scheduler.Find("b")->spec_token_ids.empty());
}

// A draft model writes its k proposals' KV past the verified tokens: num_lookahead_tokens slots
// are allocated after the scheduled ones, on admission and while running, up to max_model_len.
TEST(SchedulerTest, AllocatesLookaheadSlotsUpToMaxModelLen) {
  KvCacheManager kv({.num_blocks = 100, .block_size = 4});
  Scheduler scheduler(
      {.max_num_batched_tokens = 100, .max_model_len = 16, .num_lookahead_tokens = 3}, kv);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", 6, /*max_tokens=*/100)).ok());
  auto prefill = scheduler.Schedule();
  EXPECT_EQ(prefill.scheduled[0].num_new_tokens, 6);
  EXPECT_EQ(prefill.scheduled[0].block_tables[0].size(), 3u);  // 6 + 3 slots: 3 blocks
  Update(scheduler, prefill, SampleAll(prefill));
  scheduler.UpdateDraftTokens("a", {8, 9, 10});
  auto decode = scheduler.Schedule();  // positions 6..9 verified, 10..12 lookahead
  EXPECT_EQ(decode.scheduled[0].num_new_tokens, 4);
  EXPECT_EQ(decode.scheduled[0].block_tables[0].size(), 4u);
  Update(scheduler, decode, {{8, 9, 10, 11}});  // 11 tokens
  scheduler.UpdateDraftTokens("a", {1, 1, 1});
  auto last = scheduler.Schedule();  // positions 10..13 verified, 2 lookahead slots to 16
  EXPECT_EQ(last.scheduled[0].num_new_tokens, 4);
  EXPECT_EQ(last.scheduled[0].block_tables[0].size(), 4u);
  EXPECT_EQ(kv.num_free_blocks(), 96);

  KvCacheManager plain_kv({.num_blocks = 100, .block_size = 4});
  Scheduler plain({.max_num_batched_tokens = 100, .max_model_len = 16}, plain_kv);
  ASSERT_TRUE(plain.AddRequest(MakeRequest("a", 6)).ok());
  EXPECT_EQ(plain.Schedule().scheduled[0].block_tables[0].size(), 2u);
}

}  // namespace
}  // namespace vllm
