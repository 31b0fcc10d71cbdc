// The layer → KV cache group layout: vLLM's uniform page size grouping.
#include "model/kv_cache_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vllm {
namespace {

using ::testing::ElementsAre;

ModelConfig Config(int64_t num_layers, int64_t sliding_window, int64_t sliding_window_pattern) {
  ModelConfig config;
  config.num_layers = num_layers;
  config.sliding_window = sliding_window;
  config.sliding_window_pattern = sliding_window_pattern;
  return config;
}

// Every layer sits in exactly one group, at the place group_of_layer / place_in_group say.
void ExpectConsistent(const KvCacheLayout& layout) {
  std::vector<int> num_times_placed(layout.num_layers());
  for (int32_t g = 0; g < layout.num_groups(); ++g) {
    const auto& layers = layout.groups[g].layers;
    ASSERT_GE(static_cast<int64_t>(layers.size()), 1);
    ASSERT_LE(static_cast<int64_t>(layers.size()), layout.group_size);
    for (size_t place = 0; place < layers.size(); ++place) {
      ++num_times_placed[layers[place]];
      EXPECT_EQ(layout.group_of_layer[layers[place]], g);
      EXPECT_EQ(layout.place_in_group[layers[place]], static_cast<int32_t>(place));
    }
  }
  for (int count : num_times_placed) EXPECT_EQ(count, 1);
}

TEST(KvCacheLayoutTest, Gemma3OneBHasSixLocalGroupsAndOneGlobalOfFourLayers) {
  const KvCacheLayout layout = KvCacheLayoutOf(Config(26, 512, 6));
  ExpectConsistent(layout);
  EXPECT_EQ(layout.group_size, 4);
  ASSERT_EQ(layout.num_groups(), 7);
  EXPECT_TRUE(layout.has_sliding_group());
  for (int g = 0; g < 6; ++g) EXPECT_EQ(layout.groups[g].sliding_window, 512) << g;
  EXPECT_THAT(layout.groups[0].layers, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(layout.groups[1].layers, ElementsAre(4, 6, 7, 8));
  EXPECT_THAT(layout.groups[5].layers, ElementsAre(24, 25));  // padded
  EXPECT_EQ(layout.groups[6].sliding_window, 0);
  EXPECT_THAT(layout.groups[6].layers, ElementsAre(5, 11, 17, 23));
  EXPECT_EQ(layout.group_of_layer[23], 6);
  EXPECT_EQ(layout.place_in_group[23], 3);
}

TEST(KvCacheLayoutTest, GptOss20bHasOneSlidingAndOneFullGroup) {
  const KvCacheLayout layout = KvCacheLayoutOf(Config(24, 128, 2));
  ExpectConsistent(layout);
  EXPECT_EQ(layout.group_size, 12);
  ASSERT_EQ(layout.num_groups(), 2);
  EXPECT_EQ(layout.groups[0].sliding_window, 128);
  EXPECT_THAT(layout.groups[0].layers, ElementsAre(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22));
  EXPECT_EQ(layout.groups[1].sliding_window, 0);
  EXPECT_EQ(layout.groups[1].layers.front(), 1);
}

TEST(KvCacheLayoutTest, AllFullAttentionIsOneGroupOfEveryLayer) {
  const KvCacheLayout layout = KvCacheLayoutOf(Config(5, 0, 0));
  ExpectConsistent(layout);
  EXPECT_EQ(layout.group_size, 5);
  ASSERT_EQ(layout.num_groups(), 1);
  EXPECT_FALSE(layout.has_sliding_group());
  EXPECT_THAT(layout.groups[0].layers, ElementsAre(0, 1, 2, 3, 4));
  EXPECT_THAT(layout.place_in_group, ElementsAre(0, 1, 2, 3, 4));
}

TEST(KvCacheLayoutTest, AllSlidingIsOneSlidingGroup) {
  const KvCacheLayout layout = KvCacheLayoutOf(Config(4, 4096, 0));  // Mistral 7B v0.1
  ExpectConsistent(layout);
  EXPECT_EQ(layout.group_size, 4);
  ASSERT_EQ(layout.num_groups(), 1);
  EXPECT_EQ(layout.groups[0].sliding_window, 4096);
}

TEST(KvCacheLayoutTest, CountsThatDoNotDividePadTheLastGroupOfEachType) {
  // 3 full layers (0, 4, 8) and 7 sliding ones: group_size 3, sliding groups of 3, 3 and 1.
  std::vector<int64_t> windows(10, 16);
  windows[0] = windows[4] = windows[8] = 0;
  const KvCacheLayout layout = KvCacheLayoutFromWindows(windows);
  ExpectConsistent(layout);
  EXPECT_EQ(layout.group_size, 3);
  ASSERT_EQ(layout.num_groups(), 4);
  EXPECT_EQ(layout.groups[0].sliding_window, 0);  // layer 0 comes first
  EXPECT_THAT(layout.groups[0].layers, ElementsAre(0, 4, 8));
  EXPECT_THAT(layout.groups[1].layers, ElementsAre(1, 2, 3));
  EXPECT_THAT(layout.groups[2].layers, ElementsAre(5, 6, 7));
  EXPECT_THAT(layout.groups[3].layers, ElementsAre(9));
}

TEST(KvCacheLayoutTest, TwoWindowsAreTwoTypes) {
  const KvCacheLayout layout = KvCacheLayoutFromWindows(std::vector<int64_t>{8, 16, 8, 16, 0, 0});
  ExpectConsistent(layout);
  EXPECT_EQ(layout.group_size, 2);
  ASSERT_EQ(layout.num_groups(), 3);
  EXPECT_EQ(layout.groups[0].sliding_window, 8);
  EXPECT_EQ(layout.groups[1].sliding_window, 16);
  EXPECT_EQ(layout.groups[2].sliding_window, 0);
}

TEST(KvCacheLayoutTest, NearlyEqualCountsUseTheLargestAsGroupSize) {
  // 12 sliding + 13 full (gpt-oss-20b with an EAGLE layer): 2 groups of 13, not 3 of 12.
  std::vector<int64_t> windows(25, 0);
  for (int layer = 0; layer < 24; layer += 2) windows[layer] = 128;
  const KvCacheLayout layout = KvCacheLayoutFromWindows(windows);
  ExpectConsistent(layout);
  EXPECT_EQ(layout.group_size, 13);
  EXPECT_EQ(layout.num_groups(), 2);
}

TEST(KvCacheLayoutTest, SingleGroupKeepsEveryLayerInFullAttention) {
  const KvCacheLayout layout = SingleGroupKvCacheLayout(26);
  ExpectConsistent(layout);
  EXPECT_EQ(layout.group_size, 26);
  ASSERT_EQ(layout.num_groups(), 1);
  EXPECT_FALSE(layout.has_sliding_group());
}

}  // namespace
}  // namespace vllm
