#include "common/join.h"

#include <gtest/gtest.h>

namespace vllm {
namespace {

TEST(JoinTest, SeparatesItemsAfterTheFirstText) {
  EXPECT_EQ(Join({}, ", "), "");
  EXPECT_EQ(Join({"GET"}, ", "), "GET");
  EXPECT_EQ(Join({"a", "b", "c"}, " | "), "a | b | c");
  // As the CORS and GBNF joins it replaces wrote it: a leading empty item adds no separator.
  EXPECT_EQ(Join({"", "a", "", "b"}, ", "), "a, , b");
}

}  // namespace
}  // namespace vllm
