// vLLM's sleep mode on the demo model: sleeping gives the KV cache's memory back, requests are
// refused until wake_up, and the woken engine generates exactly what it did before.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "engine/llm_engine.h"
#include "engine/test_engine_args.h"

namespace vllm {
namespace {

using ::testing::HasSubstr;

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t total_pages = 0;
  int64_t resident_pages = 0;
  statm >> total_pages >> resident_pages;
  return resident_pages * sysconf(_SC_PAGESIZE);
}

// Runs one greedy request to its end: its token ids.
std::vector<int32_t> Complete(LLMEngine& engine, const std::string& request_id,
                              const std::string& prompt) {
  EXPECT_TRUE(engine.AddRequest(request_id, prompt, Checked(Greedy(24))).ok());
  std::vector<int32_t> token_ids;
  while (engine.HasUnfinishedRequests()) {
    auto outputs = engine.Step();
    EXPECT_TRUE(outputs.ok()) << outputs.error();
    if (!outputs.ok()) break;
    for (const RequestOutput& output : *outputs) {
      if (output.finished) token_ids = output.outputs[0].token_ids;
    }
  }
  return token_ids;
}

std::string LongPrompt() {
  std::string prompt;
  for (int i = 0; i < 8; ++i) prompt += "Once upon a time there was a dog. ";
  return prompt;
}

class SleepModeTest : public ::testing::TestWithParam<int> {};

TEST_P(SleepModeTest, FreesTheKvCacheAndWakesUpToTheSameOutputs) {
  auto engine = LLMEngine::Create(StoriesArgs());  // a 64 MiB KV cache, resident from the start
  ASSERT_TRUE(engine.ok()) << engine.error();
  const std::vector<int32_t> before = Complete(**engine, "a", LongPrompt());
  ASSERT_FALSE(before.empty());

  const int64_t resident_awake = ResidentBytes();
  ASSERT_TRUE((*engine)->Sleep(GetParam()).ok());
  EXPECT_TRUE((*engine)->is_sleeping());
  EXPECT_LT(ResidentBytes(), resident_awake - (int64_t{48} << 20));
  Status refused = (*engine)->AddRequest("b", "The dog", Checked(Greedy(4)));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), HasSubstr("sleeping"));

  ASSERT_TRUE((*engine)->WakeUp().ok());
  EXPECT_FALSE((*engine)->is_sleeping());
  // The prefix cache was forgotten with the KV it described: no hit on the same prompt.
  const int64_t hits_before = (*engine)->stats().prefix_cache_hits;
  EXPECT_EQ(Complete(**engine, "c", LongPrompt()), before);
  EXPECT_EQ((*engine)->stats().prefix_cache_hits, hits_before);
}

INSTANTIATE_TEST_SUITE_P(Levels, SleepModeTest, ::testing::Values(1, 2));

// With a draft model, its KV cache sleeps and wakes with the target's: drafting after waking
// gives the same greedy tokens.
TEST(SleepModeTest, DraftModelKvCacheSleepsToo) {
  EngineArgs args = StoriesArgs();
  args.speculative_config =
      SpeculativeConfig{.method = "draft_model", .model = args.model, .num_speculative_tokens = 3};
  auto engine = LLMEngine::Create(args);
  ASSERT_TRUE(engine.ok()) << engine.error();
  const std::vector<int32_t> before = Complete(**engine, "a", LongPrompt());
  const int64_t resident_awake = ResidentBytes();
  ASSERT_TRUE((*engine)->Sleep(1).ok());
  // The 64 MiB the target's and the draft's caches share are gone.
  EXPECT_LT(ResidentBytes(), resident_awake - (int64_t{48} << 20));
  ASSERT_TRUE((*engine)->WakeUp().ok());
  EXPECT_EQ(Complete(**engine, "b", LongPrompt()), before);
  EXPECT_GT((*engine)->stats().spec_decoding.num_drafts, 0);
}

TEST(SleepModeTest, RefusesWhileBusyAndBadArguments) {
  auto engine = LLMEngine::Create(StoriesArgs());
  ASSERT_TRUE(engine.ok()) << engine.error();
  EXPECT_THAT((*engine)->Sleep(3).message(), HasSubstr("sleep level must be 1 or 2"));
  ASSERT_TRUE((*engine)->AddRequest("a", "The dog", Checked(Greedy(8))).ok());
  EXPECT_THAT((*engine)->Sleep(1).message(), HasSubstr("requests are unfinished"));
  EXPECT_FALSE((*engine)->is_sleeping());
  (*engine)->AbortRequests({"a"});
  ASSERT_TRUE((*engine)->Sleep(1).ok());
  EXPECT_THAT((*engine)->WakeUp({"gpu"}).message(), HasSubstr("unknown wake_up tag 'gpu'"));
  // Waking the weights alone leaves the KV cache freed, as vLLM's wake_up(tags=["weights"]).
  ASSERT_TRUE((*engine)->WakeUp({"weights"}).ok());
  EXPECT_TRUE((*engine)->is_sleeping());
  ASSERT_TRUE((*engine)->WakeUp({"kv_cache"}).ok());
  EXPECT_FALSE((*engine)->is_sleeping());
}

TEST(SleepModeTest, ResetPrefixCacheForgetsCachedBlocksOnlyWhenIdle) {
  auto engine = LLMEngine::Create(StoriesArgs());
  ASSERT_TRUE(engine.ok()) << engine.error();
  const std::vector<int32_t> first = Complete(**engine, "a", LongPrompt());
  int64_t hits = (*engine)->stats().prefix_cache_hits;
  EXPECT_EQ(Complete(**engine, "b", LongPrompt()), first);
  EXPECT_GT((*engine)->stats().prefix_cache_hits, hits);  // the cache works

  ASSERT_TRUE((*engine)->AddRequest("busy", "The dog", Checked(Greedy(8))).ok());
  ASSERT_TRUE((*engine)->Step().ok());
  EXPECT_FALSE((*engine)->ResetPrefixCache());  // a running request holds blocks
  (*engine)->AbortRequests({"busy"});
  EXPECT_TRUE((*engine)->ResetPrefixCache());
  hits = (*engine)->stats().prefix_cache_hits;
  EXPECT_EQ(Complete(**engine, "c", LongPrompt()), first);
  EXPECT_EQ((*engine)->stats().prefix_cache_hits, hits);
}

}  // namespace
}  // namespace vllm
