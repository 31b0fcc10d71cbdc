#include "structured_output/grammar_compile_pool.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

namespace vllm {

GrammarCompilePool::GrammarCompilePool(StructuredOutputCompiler& compiler, Options options)
    : compiler_(compiler), options_(options) {
  for (int i = 0; i < std::max(1, options_.num_threads); ++i) {
    threads_.emplace_back([this] { WorkerLoop(); });
  }
}

GrammarCompilePool::~GrammarCompilePool() {
  std::deque<std::shared_ptr<Job>> queued;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    queued.swap(queue_);
    for (const auto& job : queued) pending_.erase(job->key);
  }
  wake_.notify_all();
  for (const auto& job : queued) {
    for (Waiter& waiter : job->waiters) waiter.done(Error{"the engine was shut down"});
  }
  for (std::thread& thread : threads_) thread.join();
}

bool GrammarCompilePool::Submit(const StructuredOutputsParams& params,
                                std::function<bool()> cancelled, Done done) {
  // What needs no compile is answered here, so it never waits behind other compiles.
  if (Status checked = compiler_.Check(params); !checked.ok()) {
    done(Error{checked.message()});
    return true;
  }
  if (auto grammar = compiler_.Lookup(params)) {
    done(std::move(grammar));
    return true;
  }
  std::string key = StructuredOutputCompiler::Key(params);
  enum class Outcome { kRefused, kJoined, kQueued } outcome = Outcome::kRefused;
  std::vector<std::shared_ptr<Job>> dropped;  // queued, and no longer wanted by anyone
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_) {
      // refused
    } else if (auto it = pending_.find(key); it != pending_.end()) {
      it->second->waiters.push_back({std::move(cancelled), std::move(done)});
      outcome = Outcome::kJoined;
    } else {
      if (pending_.size() >= options_.max_pending) dropped = DropCancelledJobs();
      if (pending_.size() < options_.max_pending) {
        auto job = std::make_shared<Job>();
        job->key = key;
        job->params = params;
        job->waiters.push_back({std::move(cancelled), std::move(done)});
        pending_.emplace(std::move(key), job);
        queue_.push_back(std::move(job));
        outcome = Outcome::kQueued;
      }
    }
  }
  for (const auto& job : dropped) {
    for (Waiter& waiter : job->waiters) waiter.done(Error{"the request was cancelled"});
  }
  if (outcome == Outcome::kQueued) wake_.notify_one();
  return outcome != Outcome::kRefused;
}

std::vector<std::shared_ptr<GrammarCompilePool::Job>> GrammarCompilePool::DropCancelledJobs() {
  std::vector<std::shared_ptr<Job>> dropped;
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (AllCancelled(**it)) {
      pending_.erase((*it)->key);
      dropped.push_back(std::move(*it));
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
  return dropped;
}

size_t GrammarCompilePool::num_pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_.size();
}

bool GrammarCompilePool::AllCancelled(const Job& job) {
  return std::all_of(job.waiters.begin(), job.waiters.end(),
                     [](const Waiter& waiter) { return waiter.cancelled && waiter.cancelled(); });
}

bool GrammarCompilePool::Cancelled(const Job& job) {
  std::lock_guard<std::mutex> lock(mutex_);
  return stop_ || AllCancelled(job);
}

void GrammarCompilePool::WorkerLoop() {
  if (options_.nice_increment > 0) {
    // On Linux a thread's nice value is its own (the thread id names it); a failure leaves it.
    const auto thread_id = static_cast<id_t>(syscall(SYS_gettid));
    errno = 0;
    const int nice = getpriority(PRIO_PROCESS, thread_id);
    if (errno == 0) setpriority(PRIO_PROCESS, thread_id, nice + options_.nice_increment);
  }
  while (true) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    Result result = Cancelled(*job)
                        ? Result(Error{"the request was cancelled"})
                        : compiler_.Compile(job->params, [this, &job] { return Cancelled(*job); });
    std::vector<Waiter> waiters;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.erase(job->key);
      waiters.swap(job->waiters);
    }
    for (Waiter& waiter : waiters) waiter.done(result);
  }
}

}  // namespace vllm
