// A bounded pool of threads for the work a request needs before and after the engine: JSON
// parsing, tokenization, chat-template rendering and building large responses. The I/O thread
// only moves bytes, so /health and running streams stay responsive while a heavy request is
// processed.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <functional>

namespace vllm::server {

class RequestWorkers {
 public:
  struct Options {
    int num_threads = 2;
    int max_pending_tasks = 256;  // queued or running; past it TrySubmit refuses
  };

  explicit RequestWorkers(Options options);
  ~RequestWorkers();  // waits for the tasks under way

  // Runs `task` on a worker thread; false (and `task` not run) when max_pending_tasks are
  // already pending. Safe from any thread.
  bool TrySubmit(std::function<void()> task);

  // Waits for every submitted task to end; later submissions are not run.
  void Join() { pool_.join(); }

  int num_pending_tasks() const { return num_pending_tasks_.load(); }

 private:
  const Options options_;
  std::atomic<int> num_pending_tasks_{0};
  boost::asio::thread_pool pool_;
};

}  // namespace vllm::server
