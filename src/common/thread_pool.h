// A persistent pool of worker threads for data-parallel kernels. Workers spin briefly and then
// sleep between jobs, so a decode step does not pay thread start-up or a futex wake per layer.
//
// Two kinds of job. Run() is a static job: every thread runs it once, and the caller waits for
// all of them. ParallelFor(), ParallelForChunks() and ParallelForGuided() are dynamic jobs: threads
// claim ranges from a shared counter, so once the caller finds nothing left to claim it closes the
// job and waits only for the workers already inside it; a worker that wakes late (asleep,
// descheduled) skips a closed job instead of holding the caller up.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "common/expected.h"

namespace vllm {

class ThreadPool {
 public:
  struct Options {
    // 0: one per online CPU (std::thread::hardware_concurrency()); otherwise 1 to MaxThreads().
    // Anything else is refused by CheckNumThreads, which callers run on what a user gave.
    int num_threads = 0;
  };
  // Throws std::invalid_argument (CheckNumThreads' message) for a num_threads it refuses.
  explicit ThreadPool(Options options);
  ThreadPool() : ThreadPool(Options{}) {}
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // The most threads a pool takes: kMaxThreadsPerCpu per online CPU. Every job splits its work
  // num_threads ways and waits for the slowest share, so threads beyond the cores only wait for
  // each other to be scheduled (on 2 cores, 3000 threads did not produce 5 tokens in 30 s); a few
  // per CPU still run, for experiments, where thousands (a typo, or a hostile value) are refused.
  static constexpr int kMaxThreadsPerCpu = 4;
  static int MaxThreads();
  // Ok when `num_threads` is 0 (one per CPU) or 1 to MaxThreads(); otherwise an error that says
  // so, for the caller to prefix with the option's name.
  static Status CheckNumThreads(int num_threads);

  // Runs fn(thread_index, num_threads) on every thread (the caller is thread 0) and returns
  // when all are done. Calls must not nest.
  void Run(const std::function<void(int thread_index, int num_threads)>& fn);

  // Splits [0, count) into min(count, num_threads) contiguous ranges of near-equal size;
  // fn(begin, end) per range. The ranges depend only on count and num_threads, never on timing
  // (which thread runs a range does). A count of 1 runs on the calling thread.
  void ParallelFor(int64_t count, const std::function<void(int64_t begin, int64_t end)>& fn);

  // Splits [0, count) into chunks of about `count / (num_threads * chunks_per_thread)` that the
  // threads claim in turn from a shared counter, so a thread that falls behind (a slower core, a
  // late wake) takes fewer: fn(begin, end) per chunk. Which thread runs a chunk depends on timing;
  // what each chunk computes must not.
  void ParallelForChunks(int64_t count, int chunks_per_thread,
                         const std::function<void(int64_t begin, int64_t end)>& fn);

  // As ParallelForChunks, with chunks that shrink as the work runs out (OpenMP's guided
  // schedule): each claim takes max(1, remaining / (kGuidedClaimsPerThread · num_threads))
  // indices, so the threads start on large chunks and finish within about one index of each
  // other. Which chunks there are depends on timing; what each index computes must not.
  void ParallelForGuided(int64_t count, const std::function<void(int64_t begin, int64_t end)>& fn);

 private:
  static constexpr int kGuidedClaimsPerThread = 2;
  // Runs claim_until_none_left on the calling thread and on the workers that join it, as a
  // dynamic job: returns once it ran out of work on every thread that joined.
  void RunDynamic(const std::function<void()>& claim_until_none_left);
  // Makes `job` the current one (a new generation in slot_) and wakes sleeping workers.
  void Publish(const std::function<void(int, int)>* job, bool is_static);
  // Spins, then sleeps, until slot_ holds a generation other than `seen` or the pool stops;
  // returns slot_'s value.
  uint64_t WaitForJobAfter(uint64_t seen);
  void WorkerLoop(int thread_index);

  int num_threads_;
  std::vector<std::thread> workers_;
  const std::function<void(int, int)>* job_ = nullptr;
  // The current job: bits [16, 64) its generation, bit 15 set once the caller closed it (dynamic
  // jobs), bit 14 set for a static job, bits [0, 14) the workers inside it (dynamic jobs).
  std::atomic<uint64_t> slot_{0};
  std::atomic<int> num_pending_{0};   // static job: workers yet to finish it
  std::atomic<int> num_sleeping_{0};  // workers blocked on wake_
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace vllm
