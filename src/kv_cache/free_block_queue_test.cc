#include "kv_cache/free_block_queue.h"

#include <gtest/gtest.h>

namespace vllm {
namespace {

TEST(FreeBlockQueueTest, PopsInIdOrderThenLeastRecentlyFreed) {
  FreeBlockQueue queue(4);
  EXPECT_EQ(queue.size(), 4);
  EXPECT_EQ(queue.PopFront(), 0);
  EXPECT_EQ(queue.PopFront(), 1);
  queue.PushBack(0);
  EXPECT_EQ(queue.PopFront(), 2);
  EXPECT_EQ(queue.PopFront(), 3);
  EXPECT_EQ(queue.PopFront(), 0);
  EXPECT_EQ(queue.size(), 0);
}

TEST(FreeBlockQueueTest, RemovesFromTheMiddleHeadAndTail) {
  FreeBlockQueue queue(5);
  queue.Remove(2);
  queue.Remove(0);
  queue.Remove(4);
  EXPECT_FALSE(queue.Contains(2));
  EXPECT_TRUE(queue.Contains(3));
  EXPECT_EQ(queue.size(), 2);
  EXPECT_EQ(queue.PopFront(), 1);
  EXPECT_EQ(queue.PopFront(), 3);
  queue.PushBack(4);
  queue.PushBack(2);
  EXPECT_EQ(queue.PopFront(), 4);
  EXPECT_EQ(queue.PopFront(), 2);
}

}  // namespace
}  // namespace vllm
