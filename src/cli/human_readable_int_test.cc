#include "cli/human_readable_int.h"

#include <gtest/gtest.h>

namespace vllm {
namespace {

TEST(HumanReadableIntTest, ReadsVllmsSuffixes) {
  EXPECT_EQ(*ParseHumanReadableInt("4096"), 4096);
  EXPECT_EQ(*ParseHumanReadableInt("-1"), -1);
  EXPECT_EQ(*ParseHumanReadableInt("32k"), 32000);
  EXPECT_EQ(*ParseHumanReadableInt("1.5k"), 1500);
  EXPECT_EQ(*ParseHumanReadableInt("2K"), 2048);
  EXPECT_EQ(*ParseHumanReadableInt("1M"), 1 << 20);
  EXPECT_EQ(*ParseHumanReadableInt("1g"), 1'000'000'000);
  for (const char* bad : {"", "k", "1.5K", "1.0005k", "12x", "abc", "99999999999T"}) {
    EXPECT_FALSE(ParseHumanReadableInt(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace vllm
