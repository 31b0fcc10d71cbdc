#include "common/thread_pool.h"

#include <immintrin.h>

#include <algorithm>

namespace vllm {
namespace {
constexpr int kSpinIterations = 20000;
}

ThreadPool::ThreadPool(Options options) {
  num_threads_ = options.num_threads > 0
                     ? options.num_threads
                     : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::Run(const std::function<void(int, int)>& fn) {
  if (num_threads_ == 1) {
    fn(0, 1);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    num_pending_.store(num_threads_ - 1);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  fn(0, num_threads_);
  while (num_pending_.load(std::memory_order_acquire) != 0) _mm_pause();
}

void ThreadPool::ParallelFor(int64_t count, const std::function<void(int64_t, int64_t)>& fn) {
  if (count <= 0) return;
  if (count == 1) {  // one thread would work: no hand-off
    fn(0, 1);
    return;
  }
  Run([&](int thread_index, int num_threads) {
    int64_t begin = count * thread_index / num_threads;
    int64_t end = count * (thread_index + 1) / num_threads;
    if (begin < end) fn(begin, end);
  });
}

void ThreadPool::ParallelForChunks(int64_t count, int chunks_per_thread,
                                   const std::function<void(int64_t, int64_t)>& fn) {
  if (count <= 0) return;
  const int64_t num_chunks = std::min<int64_t>(count, int64_t{num_threads_} * chunks_per_thread);
  std::atomic<int64_t> next_chunk{0};
  Run([&](int, int) {
    for (int64_t chunk = next_chunk.fetch_add(1, std::memory_order_relaxed); chunk < num_chunks;
         chunk = next_chunk.fetch_add(1, std::memory_order_relaxed)) {
      fn(count * chunk / num_chunks, count * (chunk + 1) / num_chunks);
    }
  });
}

void ThreadPool::WorkerLoop(int thread_index) {
  uint64_t seen_generation = 0;
  while (true) {
    int spins = 0;
    while (generation_.load(std::memory_order_acquire) == seen_generation &&
           spins < kSpinIterations) {
      _mm_pause();
      ++spins;
    }
    if (generation_.load(std::memory_order_acquire) == seen_generation) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load() != seen_generation; });
    }
    seen_generation = generation_.load(std::memory_order_acquire);
    if (stop_) return;
    (*job_)(thread_index, num_threads_);
    num_pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace vllm
