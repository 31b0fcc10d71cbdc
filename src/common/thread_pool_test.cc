#include "common/thread_pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
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

// Guided chunks cover every index once, and shrink: a chunk claimed after another is never more
// than that one's size (claims are serialized by the counter, so sorting by begin orders them).
TEST(ThreadPoolTest, ParallelForGuidedCoversEveryIndexOnceInShrinkingChunks) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 3});
  for (int64_t count : {0, 1, 2, 5, 24, 1000}) {
    std::vector<std::atomic<int>> hits(count);
    std::mutex mutex;
    std::vector<std::pair<int64_t, int64_t>> chunks;
    pool.ParallelForGuided(count, [&](int64_t begin, int64_t end) {
      EXPECT_LT(begin, end);
      {
        std::lock_guard<std::mutex> lock(mutex);
        chunks.emplace_back(begin, end);
      }
      for (int64_t i = begin; i < end; ++i) hits[i]++;
    });
    for (int64_t i = 0; i < count; ++i) EXPECT_EQ(hits[i].load(), 1);
    std::sort(chunks.begin(), chunks.end());
    for (size_t c = 1; c < chunks.size(); ++c) {
      EXPECT_LE(chunks[c].second - chunks[c].first, chunks[c - 1].second - chunks[c - 1].first)
          << count;
    }
    if (count == 1000) {
      EXPECT_EQ(chunks.front().second, 1000 / 6);  // a sixth of the work first (3 threads)
      EXPECT_EQ(chunks.back().second - chunks.back().first, 1);
    }
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

// Static and dynamic jobs interleaved, with pauses long enough for the workers to fall asleep
// now and then: every job sees each index exactly once and every static job every thread.
TEST(ThreadPoolTest, MixedJobsWithSleepingWorkersRunExactlyOnce) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 3});
  for (int job = 0; job < 3000; ++job) {
    if (job % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const int64_t count = job % 7;
    std::vector<std::atomic<int>> hits(count);
    const auto mark = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[i]++;
    };
    switch (job % 3) {
      case 0: {
        std::atomic<int> thread_mask{0};
        pool.Run([&](int thread_index, int) { thread_mask |= 1 << thread_index; });
        ASSERT_EQ(thread_mask.load(), 0b111) << job;
        break;
      }
      case 1:
        pool.ParallelFor(count, mark);
        break;
      default:
        pool.ParallelForChunks(count, 2, mark);
        break;
    }
    if (job % 3 != 0) {
      for (int64_t i = 0; i < count; ++i) ASSERT_EQ(hits[i].load(), 1) << job;
    }
  }
}

// ParallelFor's ranges are the contiguous near-equal split, whichever threads run them.
TEST(ThreadPoolTest, ParallelForRangesDependOnlyOnCountAndThreads) {
  ThreadPool pool(ThreadPool::Options{.num_threads = 2});
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  pool.ParallelFor(7, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mutex);
    ranges.emplace_back(begin, end);
  });
  std::sort(ranges.begin(), ranges.end());
  const std::vector<std::pair<int64_t, int64_t>> expected = {{0, 3}, {3, 7}};
  EXPECT_EQ(ranges, expected);
}

// A thread count is 0 (one per CPU) or 1 to a few per CPU: a huge or negative one is an error,
// never thousands of threads or a silent clamp.
TEST(ThreadPoolTest, RefusesNegativeAndOversubscribedThreadCounts) {
  const int max_threads = ThreadPool::MaxThreads();
  EXPECT_EQ(max_threads, ThreadPool::kMaxThreadsPerCpu *
                             std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
  for (int accepted : {0, 1, max_threads}) {
    EXPECT_TRUE(ThreadPool::CheckNumThreads(accepted).ok()) << accepted;
  }
  for (int refused : {-1, -3, max_threads + 1, 100000}) {
    const Status status = ThreadPool::CheckNumThreads(refused);
    ASSERT_FALSE(status.ok()) << refused;
    EXPECT_THAT(status.message(), ::testing::HasSubstr("got " + std::to_string(refused)));
    EXPECT_THAT(status.message(), ::testing::HasSubstr(" to " + std::to_string(max_threads)));
    EXPECT_THROW(ThreadPool(ThreadPool::Options{.num_threads = refused}), std::invalid_argument);
  }
  EXPECT_EQ(ThreadPool(ThreadPool::Options{}).num_threads(),
            std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
}

}  // namespace
}  // namespace vllm
