#include "engine/engine_args_check.h"

#include <cstdlib>
#include <string>

#include "common/logging.h"
#include "common/thread_pool.h"
#include "engine/tensor_parallel_step.h"
#include "sampling/logprobs_mode.h"

namespace vllm {

Status CheckEngineArgs(const EngineArgs& args) {
  if (Status threads = ThreadPool::CheckNumThreads(args.num_threads); !threads.ok()) {
    return Error{"num_threads (-t/--threads) " + threads.message()};
  }
  if (args.tensor_parallel_size < 1 || args.tensor_parallel_size > kMaxTensorParallelSize) {
    return Error{"tensor_parallel_size (-tp/--tensor-parallel-size) must be 1 to " +
                 std::to_string(kMaxTensorParallelSize) + ", got " +
                 std::to_string(args.tensor_parallel_size)};
  }
  if (args.pipeline_parallel_size < 1 || args.pipeline_parallel_size > kMaxTensorParallelSize) {
    return Error{"pipeline_parallel_size (-pp/--pipeline-parallel-size) must be 1 to " +
                 std::to_string(kMaxTensorParallelSize) + ", got " +
                 std::to_string(args.pipeline_parallel_size)};
  }
  if (args.tensor_parallel_size * args.pipeline_parallel_size > kMaxTensorParallelSize) {
    return Error{"tensor_parallel_size " + std::to_string(args.tensor_parallel_size) +
                 " x pipeline_parallel_size " + std::to_string(args.pipeline_parallel_size) +
                 " is more than " + std::to_string(kMaxTensorParallelSize) + " ranks"};
  }
  if (args.max_logprobs < -1) {
    return Error{"max_logprobs must be -1 (no limit) or at least 0, got " +
                 std::to_string(args.max_logprobs)};
  }
  if (!ParseLogprobsMode(args.logprobs_mode)) {
    return Error{
        "logprobs_mode (--logprobs-mode) must be raw_logprobs, raw_logits, "
        "processed_logprobs or processed_logits, got '" +
        args.logprobs_mode + "'"};
  }
  return Status::Ok();
}

Status CheckMaxModelLen(int64_t max_model_len, int64_t derived_max_model_len) {
  if (derived_max_model_len <= 0 || max_model_len <= derived_max_model_len) return Status::Ok();
  const std::string message =
      "User-specified max_model_len (" + std::to_string(max_model_len) +
      ") is greater than the derived max_model_len (max_position_embeddings=" +
      std::to_string(derived_max_model_len) + " in the model's config)";
  const char* allow = std::getenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN");
  if (allow != nullptr && (std::string(allow) == "1" || std::string(allow) == "true")) {
    VLLM_LOG(kWarning) << message << ". This may lead to incorrect model outputs; "
                       << "VLLM_ALLOW_LONG_MAX_MODEL_LEN allows it";
    return Status::Ok();
  }
  return Error{message +
               ". This may lead to incorrect model outputs. To allow overriding this maximum, "
               "set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"};
}

}  // namespace vllm
