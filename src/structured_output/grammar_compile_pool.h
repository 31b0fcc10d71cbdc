// Compiles structured-output constraints off the caller's thread (the engine loop): a fixed
// number of threads, a bounded number of distinct constraints queued or compiling, and one
// compile per constraint however many requests wait for it. A cached grammar and a constraint
// over the size limit are answered at once, without a thread. Constraints come checked
// (StructuredOutputsParams::Validate, where the request came in).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/expected.h"
#include "structured_output/structured_output_compiler.h"
#include "vllm/sampling_params.h"

namespace vllm {

class GrammarCompilePool {
 public:
  struct Options {
    int num_threads = 2;
    // Distinct constraints queued or compiling; past it Submit refuses another.
    size_t max_pending = 32;
    // Added to the threads' nice value (Linux), so that compiles yield the CPU to the engine's
    // steps when both want it.
    int nice_increment = 0;
  };
  using Result = Expected<std::shared_ptr<const CompiledGrammar>>;
  using Done = std::function<void(Result)>;

  // Compiles with `compiler` (within its limits), which must outlive the pool.
  GrammarCompilePool(StructuredOutputCompiler& compiler, Options options);
  // Stops the threads: compiles under way are cancelled, and every `done` not yet called runs
  // with an error.
  ~GrammarCompilePool();
  GrammarCompilePool(const GrammarCompilePool&) = delete;
  GrammarCompilePool& operator=(const GrammarCompilePool&) = delete;

  // Compiles `params` and calls `done` once with the grammar or the error: on the calling thread
  // when the answer is at hand (a cached grammar, a constraint over the size limit), otherwise
  // on a pool thread. `cancelled` (may be empty; polled from a pool thread) says the caller no
  // longer needs the grammar: a compile stops once all its callers have cancelled (their `done`
  // then gets an error). False, and `done` never called, when
  // max_pending distinct constraints are already pending (queued ones whose callers all
  // cancelled do not count) or the pool is stopping.
  bool Submit(const StructuredOutputsParams& params, std::function<bool()> cancelled, Done done);

  // Distinct constraints queued or compiling.
  size_t num_pending() const;

 private:
  struct Waiter {
    std::function<bool()> cancelled;
    Done done;
  };
  struct Job {
    std::string key;
    StructuredOutputsParams params;
    std::vector<Waiter> waiters;  // guarded by mutex_
  };

  void WorkerLoop();
  // Removes the queued jobs whose callers all cancelled (mutex_ held); their callers are yet to
  // be answered.
  std::vector<std::shared_ptr<Job>> DropCancelledJobs();
  // Whether every waiter of `job` has cancelled (mutex_ held).
  static bool AllCancelled(const Job& job);
  // Whether every waiter of `job` has cancelled, or the pool is stopping.
  bool Cancelled(const Job& job);

  StructuredOutputCompiler& compiler_;
  const Options options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::deque<std::shared_ptr<Job>> queue_;
  std::unordered_map<std::string, std::shared_ptr<Job>> pending_;  // queued or compiling, by key
  std::vector<std::thread> threads_;
};

}  // namespace vllm
