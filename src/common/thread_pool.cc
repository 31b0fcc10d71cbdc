#include "common/thread_pool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vllm {
namespace {

constexpr int kSpinIterations = 20000;

// One turn of a spin-wait: tells the core (and its sibling hyperthread) that this one waits.
inline void SpinPause() {
#if defined(__x86_64__)
  _mm_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

// slot_'s fields (thread_pool.h).
constexpr int kGenerationShift = 16;
constexpr uint64_t kClosed = uint64_t{1} << 15;
constexpr uint64_t kStatic = uint64_t{1} << 14;
constexpr uint64_t kInsideMask = kStatic - 1;
// The most workers slot_ can count inside a dynamic job.
constexpr int kMaxSlotThreads = static_cast<int>(kInsideMask);

uint64_t GenerationOf(uint64_t slot) { return slot >> kGenerationShift; }

int NumOnlineCpus() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

}  // namespace

int ThreadPool::MaxThreads() {
  return static_cast<int>(
      std::min<int64_t>(int64_t{kMaxThreadsPerCpu} * NumOnlineCpus(), kMaxSlotThreads));
}

Status ThreadPool::CheckNumThreads(int num_threads) {
  if (num_threads >= 0 && num_threads <= MaxThreads()) return Status::Ok();
  return Error{"must be 0 (one per CPU) or 1 to " + std::to_string(MaxThreads()) + " (" +
               std::to_string(kMaxThreadsPerCpu) + " per online CPU; more only oversubscribe " +
               "the cores), got " + std::to_string(num_threads)};
}

ThreadPool::ThreadPool(Options options) {
  if (Status status = CheckNumThreads(options.num_threads); !status.ok()) {
    throw std::invalid_argument("num_threads " + status.message());
  }
  num_threads_ =
      options.num_threads > 0 ? options.num_threads : std::min(NumOnlineCpus(), MaxThreads());
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  Publish(nullptr, /*is_static=*/false);
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::Publish(const std::function<void(int, int)>* job, bool is_static) {
  job_ = job;
  if (is_static) num_pending_.store(num_threads_ - 1, std::memory_order_relaxed);
  const uint64_t generation = GenerationOf(slot_.load(std::memory_order_relaxed)) + 1;
  // seq_cst store, then seq_cst load of num_sleeping_: a worker that counted itself asleep
  // before checking slot_ either sees this generation or is seen here and notified.
  slot_.store((generation << kGenerationShift) | (is_static ? kStatic : 0));
  if (num_sleeping_.load() > 0) {
    { std::lock_guard<std::mutex> lock(mutex_); }
    wake_.notify_all();
  }
}

void ThreadPool::Run(const std::function<void(int, int)>& fn) {
  if (num_threads_ == 1) {
    fn(0, 1);
    return;
  }
  Publish(&fn, /*is_static=*/true);
  fn(0, num_threads_);
  while (num_pending_.load(std::memory_order_acquire) != 0) SpinPause();
}

void ThreadPool::ParallelFor(int64_t count, const std::function<void(int64_t, int64_t)>& fn) {
  ParallelForChunks(count, 1, fn);
}

void ThreadPool::ParallelForChunks(int64_t count, int chunks_per_thread,
                                   const std::function<void(int64_t, int64_t)>& fn) {
  if (count <= 0) return;
  // The chunks and their counter, reached through one pointer so that `job` needs no allocation.
  struct Chunks {
    int64_t count, num_chunks;
    const std::function<void(int64_t, int64_t)>* fn;
    std::atomic<int64_t> next{0};
    void ClaimUntilNoneLeft() {
      for (int64_t chunk = next.fetch_add(1, std::memory_order_relaxed); chunk < num_chunks;
           chunk = next.fetch_add(1, std::memory_order_relaxed)) {
        (*fn)(count * chunk / num_chunks, count * (chunk + 1) / num_chunks);
      }
    }
  } chunks{count, std::min<int64_t>(count, int64_t{num_threads_} * chunks_per_thread), &fn};
  if (chunks.num_chunks == 1 || num_threads_ == 1) {  // no hand-off
    chunks.ClaimUntilNoneLeft();
    return;
  }
  RunDynamic([&chunks] { chunks.ClaimUntilNoneLeft(); });
}

void ThreadPool::ParallelForGuided(int64_t count, const std::function<void(int64_t, int64_t)>& fn) {
  if (count <= 0) return;
  if (count == 1 || num_threads_ == 1) {  // no hand-off
    fn(0, count);
    return;
  }
  const int64_t divisor = int64_t{num_threads_} * kGuidedClaimsPerThread;
  std::atomic<int64_t> next{0};
  RunDynamic([&] {
    int64_t begin = next.load(std::memory_order_relaxed);
    while (begin < count) {
      const int64_t end = begin + std::max<int64_t>(1, (count - begin) / divisor);
      if (next.compare_exchange_weak(begin, end, std::memory_order_relaxed)) {
        fn(begin, end);
        begin = next.load(std::memory_order_relaxed);
      }
    }
  });
}

void ThreadPool::RunDynamic(const std::function<void()>& claim_until_none_left) {
  const std::function<void(int, int)> job = [&claim_until_none_left](int, int) {
    claim_until_none_left();
  };
  Publish(&job, /*is_static=*/false);
  claim_until_none_left();
  // Every chunk is claimed: close the job, then wait for the workers that joined it.
  slot_.fetch_or(kClosed, std::memory_order_acq_rel);
  while ((slot_.load(std::memory_order_acquire) & kInsideMask) != 0) SpinPause();
}

uint64_t ThreadPool::WaitForJobAfter(uint64_t seen) {
  for (int spins = 0; spins < kSpinIterations; ++spins) {
    const uint64_t slot = slot_.load(std::memory_order_acquire);
    if (GenerationOf(slot) != seen) return slot;
    SpinPause();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  num_sleeping_.fetch_add(1);
  wake_.wait(lock, [&] { return GenerationOf(slot_.load()) != seen; });
  num_sleeping_.fetch_sub(1);
  return slot_.load(std::memory_order_acquire);
}

void ThreadPool::WorkerLoop(int thread_index) {
  uint64_t seen = 0;
  while (true) {
    uint64_t slot = WaitForJobAfter(seen);
    if (stop_.load()) return;
    seen = GenerationOf(slot);
    if (slot & kStatic) {  // the caller waits for this thread: job_ stays valid
      (*job_)(thread_index, num_threads_);
      num_pending_.fetch_sub(1, std::memory_order_acq_rel);
      continue;
    }
    // Join the dynamic job unless it is closed or already replaced by a newer one.
    while ((slot & kClosed) == 0 && GenerationOf(slot) == seen) {
      if (slot_.compare_exchange_weak(slot, slot + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        (*job_)(thread_index, num_threads_);  // valid until this thread leaves
        slot_.fetch_sub(1, std::memory_order_release);
        break;
      }
    }
  }
}

}  // namespace vllm
