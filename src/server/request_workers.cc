#include "server/request_workers.h"

#include <boost/asio/post.hpp>

#include "common/logging.h"

namespace vllm::server {

RequestWorkers::RequestWorkers(Options options)
    : options_(options), pool_(static_cast<size_t>(std::max(1, options.num_threads))) {}

RequestWorkers::~RequestWorkers() { pool_.join(); }

bool RequestWorkers::TrySubmit(std::function<void()> task) {
  if (num_pending_tasks_.fetch_add(1) >= options_.max_pending_tasks) {
    --num_pending_tasks_;
    return false;
  }
  boost::asio::post(pool_, [this, task = std::move(task)] {
    try {
      task();
    } catch (const std::exception& e) {  // a task answers its own errors; this is a last resort
      VLLM_LOG(kError) << "request task failed: " << e.what();
    }
    --num_pending_tasks_;
  });
  return true;
}

}  // namespace vllm::server
