#include "lora/lora_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "common/temp_test_dir.h"
#include "lora/lora_test_files.h"

namespace vllm::lora {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class LoraCacheTest : public ::testing::Test {
 protected:
  // Adapter k (1 ≤ k ≤ 4) targets v of layer 0 with rank k.
  void SetUp() override {
    for (int k = 1; k <= 4; ++k) {
      ASSERT_TRUE(WritePeftAdapter(
                      Path(k), PeftConfig(k, 1, "[\"v_proj\"]"),
                      {MakeTestTensor(PeftTensorName(0, "self_attn.v_proj", 'A'), {k, 32}, k),
                       MakeTestTensor(PeftTensorName(0, "self_attn.v_proj", 'B'), {16, k}, k + 1)})
                      .ok());
    }
  }
  std::string Path(int k) const { return dir_.File("adapter" + std::to_string(k)); }
  LoraRequest Request(int k) const { return {"adapter" + std::to_string(k), k, Path(k), ""}; }

  std::unique_ptr<LoraCache> MakeCache(int64_t max_cpu_loras) {
    auto cache = LoraCache::Create({.max_cpu_loras = max_cpu_loras, .base = TinyBase()});
    EXPECT_TRUE(cache.ok());
    return std::move(*cache);
  }

  TempTestDir dir_{"lora_cache_test"};
};

TEST_F(LoraCacheTest, EvictsTheLeastRecentlyUsedBeyondCapacity) {
  std::unique_ptr<LoraCache> cache = MakeCache(2);
  auto first = cache->Get(Request(1));
  ASSERT_TRUE(first.ok()) << first.error();
  EXPECT_EQ((*first)->rank, 1);
  ASSERT_TRUE(cache->Get(Request(2)).ok());
  auto again = cache->Get(Request(1));  // a hit: the same object, now the most recent
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), first->get());
  EXPECT_THAT(cache->Ids(), ElementsAre(1, 2));
  auto third = cache->Get(Request(3));
  ASSERT_TRUE(third.ok());
  EXPECT_THAT(cache->Ids(), ElementsAre(3, 1));
  // An evicted adapter a caller still holds stays alive; asking again loads it anew.
  ASSERT_TRUE(cache->Get(Request(2)).ok());
  EXPECT_THAT(cache->Ids(), ElementsAre(2, 3));
  EXPECT_EQ((*first)->id, 1);
  EXPECT_EQ((*first)->layers[0].targets[int(LoraTarget::kV)]->rank, 1);
}

TEST_F(LoraCacheTest, RemoveDropsAnAdapter) {
  std::unique_ptr<LoraCache> cache = MakeCache(4);
  ASSERT_TRUE(cache->Get(Request(1)).ok());
  ASSERT_TRUE(cache->Get(Request(2)).ok());
  EXPECT_TRUE(cache->Remove(1));
  EXPECT_FALSE(cache->Remove(1));
  EXPECT_THAT(cache->Ids(), ElementsAre(2));
}

TEST_F(LoraCacheTest, RefusesConflictingRequestsAndKeepsNothingThatFailed) {
  EXPECT_THAT(LoraCache::Create({.max_cpu_loras = 0}).error(),
              HasSubstr("max_cpu_loras must be at least 1"));
  std::unique_ptr<LoraCache> cache = MakeCache(4);
  ASSERT_TRUE(cache->Get(Request(1)).ok());
  LoraRequest other_path = Request(1);
  other_path.lora_path = Path(2);
  EXPECT_THAT(cache->Get(other_path).error(),
              HasSubstr("LoRA id 1 is already loaded as 'adapter1'"));
  LoraRequest other_id = Request(1);
  other_id.lora_int_id = 7;
  EXPECT_THAT(cache->Get(other_id).error(),
              HasSubstr("LoRA adapter 'adapter1' is already loaded with id 1"));
  LoraRequest zero = Request(2);
  zero.lora_int_id = 0;
  EXPECT_THAT(cache->Get(zero).error(), HasSubstr("lora_int_id must be greater than 0"));
  LoraRequest missing = {"missing", 9, dir_.File("nowhere"), ""};
  EXPECT_THAT(cache->Get(missing).error(), HasSubstr("No adapter found for"));
  EXPECT_THAT(cache->Ids(), ElementsAre(1));
}

// Threads asking for overlapping adapters through a cache smaller than their set always get the
// adapter they named.
TEST_F(LoraCacheTest, ServesConcurrentCallers) {
  std::unique_ptr<LoraCache> cache = MakeCache(2);
  std::vector<std::thread> threads;
  std::atomic<int> num_wrong = 0;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 30; ++i) {
        const int k = 1 + (t + i) % 4;
        auto weights = cache->Get(Request(k));
        if (!weights.ok() || (*weights)->id != k || (*weights)->rank != k) ++num_wrong;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(num_wrong, 0);
  EXPECT_EQ(cache->Ids().size(), 2u);
}

}  // namespace
}  // namespace vllm::lora
