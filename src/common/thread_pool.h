// A persistent pool of worker threads for data-parallel kernels. Workers spin briefly and then
// sleep between jobs, so a decode step does not pay thread start-up or a futex wake per layer.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace vllm {

class ThreadPool {
 public:
  struct Options {
    int num_threads = 0;  // 0: std::thread::hardware_concurrency()
  };
  explicit ThreadPool(Options options);
  ThreadPool() : ThreadPool(Options{}) {}
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Runs fn(thread_index, num_threads) on every thread (the caller is thread 0) and returns
  // when all are done. Calls must not nest.
  void Run(const std::function<void(int thread_index, int num_threads)>& fn);

  // Splits [0, count) into contiguous ranges, one per thread; fn(begin, end) per non-empty range.
  // The split depends only on count and num_threads, never on timing. A count of 1 runs on the
  // calling thread.
  void ParallelFor(int64_t count, const std::function<void(int64_t begin, int64_t end)>& fn);

  // Splits [0, count) into chunks of about `count / (num_threads * chunks_per_thread)` that the
  // threads claim in turn from a shared counter, so a thread that falls behind (a slower core, a
  // late wake) takes fewer: fn(begin, end) per chunk. Which thread runs a chunk depends on timing;
  // what each chunk computes must not.
  void ParallelForChunks(int64_t count, int chunks_per_thread,
                         const std::function<void(int64_t begin, int64_t end)>& fn);

 private:
  void WorkerLoop(int thread_index);

  int num_threads_;
  std::vector<std::thread> workers_;
  const std::function<void(int, int)>* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> num_pending_{0};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace vllm
