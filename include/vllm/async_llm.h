// vLLM's AsyncLLM: a thread-safe front end whose engine core loop runs on its own thread. Each
// request yields a stream of RequestOutputs (as its SamplingParams.output_kind says) and can be
// aborted at any time; an aborted request's KV blocks are freed by the loop at once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "vllm/engine_args.h"
#include "vllm/outputs.h"
#include "vllm/sampling_params.h"

namespace vllm {

// The outputs of one request, produced by the engine thread and consumed by one reader.
class RequestOutputStream {
 public:
  // Blocks for the next output; nullopt once the final output has been read.
  std::optional<RequestOutput> Next();
  // The error that ended the stream early (empty when none).
  std::string error() const;

 private:
  friend class AsyncLLM;
  void Push(RequestOutput output);
  void Fail(std::string message);

  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<RequestOutput> outputs_;
  bool closed_ = false;
  std::string error_;
};

class AsyncLLM {
 public:
  // Loads the model and starts the engine thread; throws std::runtime_error on failure.
  explicit AsyncLLM(const EngineArgs& args);
  ~AsyncLLM();  // stops the engine thread; unfinished streams end with an error
  AsyncLLM(const AsyncLLM&) = delete;
  AsyncLLM& operator=(const AsyncLLM&) = delete;

  // Adds a request (prompt text or token ids). Throws std::invalid_argument with vLLM's message
  // when the engine refuses it.
  std::shared_ptr<RequestOutputStream> Generate(
      const std::string& request_id, const std::variant<std::string, std::vector<int32_t>>& prompt,
      const SamplingParams& params, int priority = 0);
  // Aborts a request; its stream gets a final output with finish_reason "abort".
  void Abort(const std::string& request_id);

  // Engine counters, read through the engine thread.
  int num_running_requests();
  int64_t num_free_kv_blocks();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vllm
