#include "engine/engine_args_check.h"

#include <string>

#include "common/thread_pool.h"

namespace vllm {

Status CheckEngineArgs(const EngineArgs& args) {
  if (Status threads = ThreadPool::CheckNumThreads(args.num_threads); !threads.ok()) {
    return Error{"num_threads (-t/--threads) " + threads.message()};
  }
  if (args.max_logprobs < -1) {
    return Error{"max_logprobs must be -1 (no limit) or at least 0, got " +
                 std::to_string(args.max_logprobs)};
  }
  return Status::Ok();
}

}  // namespace vllm
