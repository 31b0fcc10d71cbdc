#include "common/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace vllm {
namespace {

TEST(ThreadPoolTest, ParallelForCoversEveryIndexOnce) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 3});
  for (int64_t count : {0, 1, 2, 3, 7, 1000}) {
    std::vector<std::atomic<int>> hits(count);
    pool.ParallelFor(count, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[i]++;
    });
    for (int64_t i = 0; i < count; ++i) EXPECT_EQ(hits[i].load(), 1);
  }
}

TEST(ThreadPoolTest, ParallelForChunksCoversEveryIndexOnceInContiguousChunks) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 3});
  for (int64_t count : {0, 1, 2, 5, 24, 1000}) {
    std::vector<std::atomic<int>> hits(count);
    std::atomic<int> num_chunks{0};
    pool.ParallelForChunks(count, 4, [&](int64_t begin, int64_t end) {
      EXPECT_LT(begin, end);
      ++num_chunks;
      for (int64_t i = begin; i < end; ++i) hits[i]++;
    });
    for (int64_t i = 0; i < count; ++i) EXPECT_EQ(hits[i].load(), 1);
    EXPECT_EQ(num_chunks.load(), std::min<int64_t>(count, 12)) << count;
  }
}

TEST(ThreadPoolTest, RunsManyJobsBackToBack) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  std::atomic<int64_t> total{0};
  for (int job = 0; job < 5000; ++job) {
    pool.Run([&](int thread_index, int num_threads) { total += thread_index + 1; });
  }
  EXPECT_EQ(total.load(), 5000 * 3);
}

}  // namespace
}  // namespace vllm
