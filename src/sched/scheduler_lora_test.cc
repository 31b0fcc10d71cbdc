// LoRA in the scheduler: at most max_loras distinct adapters run at once (waiting requests of
// another adapter are skipped, not refused), and prefix-cache blocks never cross adapters.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "sched/scheduler.h"

namespace vllm {
namespace {

std::unique_ptr<Request> LoraRequestOf(const std::string& id, int64_t lora_id,
                                       int num_prompt_tokens = 5, int max_tokens = 2) {
  auto request = std::make_unique<Request>();
  request->request_id = id;
  request->prompt_token_ids.resize(num_prompt_tokens);
  std::iota(request->prompt_token_ids.begin(), request->prompt_token_ids.end(), 10);
  request->params.max_tokens = max_tokens;
  request->cache_keys.lora_id = lora_id;
  return request;
}

// Every scheduled request whose tokens are all computed after this step samples token 7.
std::vector<std::vector<int32_t>> SampleAll(const SchedulerOutput& output) {
  std::vector<std::vector<int32_t>> sampled;
  for (const auto& s : output.scheduled) {
    const bool reaches_end =
        s.request->num_computed_tokens + s.num_new_tokens >= s.request->num_tokens();
    sampled.push_back(reaches_end ? std::vector<int32_t>{7} : std::vector<int32_t>{});
  }
  return sampled;
}

std::vector<std::string> ScheduledIds(const SchedulerOutput& output) {
  std::vector<std::string> ids;
  for (const auto& s : output.scheduled) ids.push_back(s.request->request_id);
  return ids;
}

TEST(SchedulerLoraTest, AdmitsAtMostMaxLorasAdaptersSkippingTheOthersInOrder) {
  KvCacheManager kv({.num_blocks = 100, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 100, .max_model_len = 100, .max_loras = 2}, kv);
  // Adapters 1, 2, 3, then the base, then 1 again: the adapter-3 request waits (skipped) while
  // those behind it that fit are admitted.
  for (const auto& [id, lora] : std::vector<std::pair<std::string, int64_t>>{
           {"a1", 1}, {"b2", 2}, {"c3", 3}, {"base", 0}, {"d1", 1}}) {
    ASSERT_TRUE(scheduler.AddRequest(LoraRequestOf(id, lora)).ok());
  }
  SchedulerOutput first = scheduler.Schedule();
  EXPECT_EQ(ScheduledIds(first), (std::vector<std::string>{"a1", "b2", "base", "d1"}));
  EXPECT_EQ(scheduler.num_waiting(), 1);
  // vllm:lora_requests_info's adapters: each once, the base not among them.
  EXPECT_EQ(scheduler.running_lora_ids(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(scheduler.waiting_lora_ids(), (std::vector<int64_t>{3}));
  std::vector<std::vector<int32_t>> sampled = SampleAll(first);
  scheduler.Update(first, sampled);
  // Still two adapters running: c3 keeps waiting.
  SchedulerOutput second = scheduler.Schedule();
  EXPECT_EQ(ScheduledIds(second), (std::vector<std::string>{"a1", "b2", "base", "d1"}));
  sampled = SampleAll(second);
  EXPECT_EQ(scheduler.Update(second, sampled).size(), 4u);  // max_tokens 2: all finish
  // Adapters 1 and 2 are gone, so 3 runs.
  SchedulerOutput third = scheduler.Schedule();
  EXPECT_EQ(ScheduledIds(third), (std::vector<std::string>{"c3"}));
}

TEST(SchedulerLoraTest, MaxLorasOneRunsAdaptersOneAfterAnotherAndEveryRequestCompletes) {
  KvCacheManager kv({.num_blocks = 100, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 100, .max_model_len = 100, .max_loras = 1}, kv);
  for (const auto& [id, lora] :
       std::vector<std::pair<std::string, int64_t>>{{"x1", 1}, {"y2", 2}, {"z1", 1}, {"w2", 2}}) {
    ASSERT_TRUE(scheduler.AddRequest(LoraRequestOf(id, lora)).ok());
  }
  std::vector<std::string> finished;
  for (int step = 0; step < 10 && scheduler.HasUnfinishedRequests(); ++step) {
    SchedulerOutput output = scheduler.Schedule();
    std::map<int64_t, int> adapters;
    for (const auto& s : output.scheduled) ++adapters[s.request->cache_keys.lora_id];
    EXPECT_LE(adapters.size(), 1u) << "step " << step;
    std::vector<std::vector<int32_t>> sampled = SampleAll(output);
    for (auto& request : scheduler.Update(output, sampled)) {
      finished.push_back(request->request_id);
    }
  }
  EXPECT_EQ(finished, (std::vector<std::string>{"x1", "z1", "y2", "w2"}));
}

TEST(SchedulerLoraTest, PrefixCacheBlocksAreSharedWithinAnAdapterOnly) {
  KvCacheManager kv({.num_blocks = 100, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 100, .max_model_len = 100}, kv);
  ASSERT_TRUE(scheduler.AddRequest(LoraRequestOf("first", 1, 20, 1)).ok());
  SchedulerOutput output = scheduler.Schedule();
  std::vector<std::vector<int32_t>> sampled = SampleAll(output);
  scheduler.Update(output, sampled);
  // The same prompt with another adapter, or the base, computes it all; the same adapter hits.
  for (const auto& [id, lora, computed] : std::vector<std::tuple<std::string, int64_t, int64_t>>{
           {"other", 2, 20}, {"base", 0, 20}, {"same", 1, 4}}) {
    ASSERT_TRUE(scheduler.AddRequest(LoraRequestOf(id, lora, 20, 1)).ok());
    output = scheduler.Schedule();
    ASSERT_EQ(output.scheduled.size(), 1u);
    EXPECT_EQ(output.scheduled[0].num_new_tokens, computed) << id;
    sampled = SampleAll(output);
    scheduler.Update(output, sampled);
  }
  EXPECT_NE(HashBlockTokens(0, std::vector<int32_t>{1, 2, 3, 4}, {.lora_id = 1}),
            HashBlockTokens(0, std::vector<int32_t>{1, 2, 3, 4}, {.lora_id = 2}));
}

}  // namespace
}  // namespace vllm
