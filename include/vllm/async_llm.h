// vLLM's AsyncLLM: a thread-safe front end whose engine core loop runs on its own thread. Each
// request yields a stream of RequestOutputs (as its SamplingParams.output_kind says) and can be
// aborted at any time; an aborted request's KV blocks are freed by the loop at once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "vllm/engine_args.h"
#include "vllm/iteration_tokens_stats.h"
#include "vllm/lora_request.h"
#include "vllm/outputs.h"
#include "vllm/pooling_params.h"
#include "vllm/request_options.h"
#include "vllm/sampling_params.h"
#include "vllm/spec_decoding_stats.h"
#include "vllm/validated_sampling_params.h"

namespace vllm {

class Status;  // common/expected.h
class Tokenizer;

// Engine counters as of the last step (vLLM's scheduler stats).
struct EngineStatsSnapshot {
  int num_running = 0;
  int num_waiting = 0;
  double kv_cache_usage = 0.0;  // fraction of KV blocks in use
  int64_t num_free_blocks = 0;
  int64_t num_preemptions = 0;
  int64_t prefix_cache_queries = 0;  // tokens looked up in the prefix cache
  int64_t prefix_cache_hits = 0;     // tokens found there
  SpecDecodingStats spec_decoding;   // all zero without --speculative-config
  IterationTokensStats iteration_tokens;
  // The LoRA adapters (lora_int_id) of the running and of the waiting requests, each once.
  std::vector<int64_t> running_lora_ids;
  std::vector<int64_t> waiting_lora_ids;
};

// The outputs of one request, produced by the engine thread and consumed by one reader.
class RequestOutputStream {
 public:
  // Blocks for the next output; nullopt once the final output has been read.
  std::optional<RequestOutput> Next();
  // The next output if one is ready (never blocks).
  std::optional<RequestOutput> TryNext();
  // True once the stream has ended and every output has been read.
  bool done() const;
  // The error that ended the stream early (empty when none).
  std::string error() const;
  // True when the error is the engine refusing the request (an invalid request, not a failure).
  bool rejected() const;
  // True when the engine could not take the request now (too many structured-output constraints
  // are compiling): the request may be sent again later.
  bool overloaded() const;
  // Called on the engine thread (with no lock held) after each new output or error; set it
  // before the request is submitted.
  void SetListener(std::function<void()> listener) { listener_ = std::move(listener); }

 private:
  friend class AsyncLLM;
  void Push(RequestOutput output);
  void Fail(std::string message, bool rejected, bool overloaded = false);

  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<RequestOutput> outputs_;
  bool closed_ = false;
  std::string error_;
  bool rejected_ = false;
  bool overloaded_ = false;
  std::function<void()> listener_;
};

class AsyncLLM {
 public:
  // Loads the model and starts the engine thread; throws std::runtime_error on failure.
  explicit AsyncLLM(const EngineArgs& args);
  ~AsyncLLM();  // stops the engine thread; unfinished streams end with an error
  AsyncLLM(const AsyncLLM&) = delete;
  AsyncLLM& operator=(const AsyncLLM&) = delete;

  // Adds a request (prompt text or token ids). Throws std::invalid_argument with vLLM's message
  // when the engine refuses it (the params are checked here, once: this is where they come in). A
  // structured-output constraint compiles on the compile threads (this call waits for it; the
  // engine loop does not).
  std::shared_ptr<RequestOutputStream> Generate(
      const std::string& request_id, const std::variant<std::string, std::vector<int32_t>>& prompt,
      const SamplingParams& params, int priority = 0);
  // Adds a request without waiting for the engine thread: a refusal ends the stream with an
  // error for which rejected() is true. Set the stream's listener through `listener`. A
  // structured-output constraint compiles first on the compile threads (--structured-outputs-
  // compile-threads), so neither the engine loop nor the other requests wait for it; a cached
  // one is used at once. With too many constraints compiling, the stream ends with an error for
  // which overloaded() is true.
  std::shared_ptr<RequestOutputStream> Submit(
      const std::string& request_id, const std::variant<std::string, std::vector<int32_t>>& prompt,
      const ValidatedSamplingParams& params, const RequestOptions& options,
      std::function<void()> listener);
  // The same for params not checked yet: they are checked here (once), and invalid ones end the
  // stream with vLLM's message, rejected() true.
  std::shared_ptr<RequestOutputStream> Submit(
      const std::string& request_id, const std::variant<std::string, std::vector<int32_t>>& prompt,
      const SamplingParams& params, const RequestOptions& options, std::function<void()> listener);
  // Pooling models: adds a pooling request ("embed", "classify", "score", "encode") for text,
  // token ids or a (first, second) text pair (cross-encoders), without waiting for the engine
  // thread. `done` runs once on the engine thread: with the output, or with nullptr and the
  // error (rejected: true when the engine refused the request, with vLLM's message).
  // `lora_request`: the adapter the forward pass runs (--enable-lora); none: the base model.
  using PoolingInput =
      std::variant<std::string, std::vector<int32_t>, std::pair<std::string, std::string>>;
  using PoolingDone = std::function<void(const PoolingRequestOutput* output,
                                         const std::string& error, bool rejected)>;
  void SubmitPooling(const std::string& request_id, PoolingInput input, const std::string& task,
                     const PoolingParams& params, PoolingDone done,
                     const std::optional<LoraRequest>& lora_request = std::nullopt);
  // A "score" request for one (first, second) pair: one pair sequence through a cross-encoder's
  // head, or the cosine similarity of the two texts' embeddings (a bi-encoder; both with
  // `lora_request`). `done` as SubmitPooling's, with the score as the output's one value and the
  // prompt tokens of both.
  void SubmitScore(const std::string& request_id, std::pair<std::string, std::string> texts,
                   const PoolingParams& params, PoolingDone done,
                   const std::optional<LoraRequest>& lora_request = std::nullopt);
  // The pooling tasks the model serves (empty for a generative model).
  std::vector<std::string> pooling_tasks() const;
  // Whether the model has a classification head (a cross-encoder for scores).
  bool has_classifier() const;
  // The classification head's label names by class index (config.json id2label; may be empty).
  std::vector<std::string> classifier_labels() const;

  // Aborts a request (without waiting); its stream gets a final output with finish_reason "abort".
  void Abort(const std::string& request_id);

  // vLLM's sleep mode on the engine thread (LLMEngine::Sleep): level 1 frees the KV cache, level 2
  // also the weights' memory. With `abort_unfinished` the requests under way (compiling ones
  // too) first end with finish_reason "abort", as vLLM's sleep(mode="abort"); without it an
  // unfinished request makes it fail. Asleep, new requests are refused until WakeUp. Both throw
  // std::runtime_error with the reason when the engine refuses.
  void Sleep(int level, bool abort_unfinished);
  // Restores what `tags` name ("weights", "kv_cache"; empty: both).
  void WakeUp(const std::vector<std::string>& tags = {});
  bool is_sleeping();
  // Requests not finished yet: compiling their constraint, waiting or running.
  int num_unfinished_requests();

  // vLLM's add_lora / remove_lora / list_loras (LLMEngine's), on the calling thread: the adapter
  // cache is thread-safe, so loading an adapter does not hold up the engine's steps. A request
  // runs an adapter through RequestOptions::lora_request.
  Status AddLora(const LoraRequest& lora_request);
  bool RemoveLora(int64_t lora_int_id);
  std::vector<int64_t> ListLoras() const;

  // Engine counters, read through the engine thread.
  int num_running_requests();
  int64_t num_free_kv_blocks();
  // Counters as of the last step, without waiting for the engine thread.
  EngineStatsSnapshot stats() const;
  // Why the engine is dead (a rank of its parallel job stopped answering: vLLM's EngineDeadError),
  // without waiting for the engine thread; nullopt while it runs.
  std::optional<std::string> dead_error() const;

  // The model's tokenizer (immutable; safe to use from any thread); only when has_tokenizer()
  // (false under --skip-tokenizer-init).
  bool has_tokenizer() const;
  const Tokenizer& tokenizer() const;
  // The ids a prompt may hold: the tokenizer's vocabulary, or without one the model's.
  int64_t prompt_vocab_size() const;
  int64_t max_model_len() const;
  // --enable-prompt-embeds: generation requests may carry RequestOptions::prompt_embeds.
  bool enable_prompt_embeds() const;
  // Sampling defaults of the model (its generation_config.json, else SamplingParams').
  SamplingParams default_sampling_params() const;
  // The model's chat template (empty when it has none).
  std::string chat_template() const;

 private:
  struct Impl;
  // Submit's path for a request with a structured-output constraint: compile, then add.
  void SubmitConstrained(const std::string& request_id,
                         const std::variant<std::string, std::vector<int32_t>>& prompt,
                         const ValidatedSamplingParams& params, const RequestOptions& options,
                         std::shared_ptr<RequestOutputStream> stream);

  std::unique_ptr<Impl> impl_;
};

}  // namespace vllm
