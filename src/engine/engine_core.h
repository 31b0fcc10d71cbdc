// The engine core loop, as vLLM v1's EngineCore: schedule → execute → sample → update. It owns
// the scheduler, the KV cache manager and the model runner; it knows token ids, never text.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "engine/engine_stats.h"
#include "kv_cache/kv_cache_manager.h"
#include "lora/lora_weights.h"
#include "model/model_loader.h"
#include "runner/model_runner.h"
#include "sched/scheduler.h"
#include "structured_output/grammar_matcher.h"
#include "vllm/engine_args.h"
#include "vllm/sampling_params.h"
#include "vllm/spec_decoding_stats.h"

namespace vllm {

struct EngineCoreRequest {
  std::string request_id;
  std::vector<int32_t> prompt_token_ids;
  SamplingParams params;
  std::optional<int32_t> eos_token_id;
  int priority = 0;
  std::string cache_salt;
  std::vector<std::vector<int32_t>> bad_words_token_ids;  // tokenized params.bad_words
  std::shared_ptr<const CompiledGrammar> grammar;  // params.structured_outputs compiled; or null
  // The grammar applies once the output ends with these ids (the reasoning's end); empty: at once.
  std::vector<int32_t> grammar_after_token_ids;
  // A pooling request (prefill only; its output is the pooled vector); pooling runners take
  // only these, generate runners none.
  std::optional<PoolingSpec> pooling;
  // The prompt as embeddings, one row per (placeholder) prompt token id; null: looked up.
  std::shared_ptr<const PromptEmbeds> prompt_embeds;
  // The LoRA adapter it runs (its id keys the prefix cache and counts against max_loras); null:
  // the base model.
  std::shared_ptr<const lora::LoraWeights> lora;
};

// What one step produced for one request.
struct EngineCoreOutput {
  std::string request_id;
  std::vector<int32_t> new_token_ids;
  std::vector<TokenLogprobs> new_logprobs;  // [new_token_ids.size()] when logprobs were asked
  // Logprobs of prompt tokens computed this step, in order (prompt token 1 onwards).
  std::vector<TokenLogprobs> new_prompt_logprobs;
  RequestStatus status = RequestStatus::kRunning;  // a finished status when it ended this step
  std::optional<int32_t> stop_token_id;
  int64_t num_cached_tokens = 0;
  // Seconds from AddRequest to the first step that scheduled it; set in that step's output.
  std::optional<double> queue_seconds;
  // A finished pooling request's output (PoolOutput's form).
  std::vector<float> pooled;
};

class EngineCore {
 public:
  // Uses the sizing and scheduling fields of `args` (not model / num_threads). A draft model
  // (args.speculative_config) is loaded onto `pool`, the target's thread pool.
  static Expected<std::unique_ptr<EngineCore>> Create(Model& model, const EngineArgs& args,
                                                      ThreadPool* pool = nullptr);

  Status AddRequest(EngineCoreRequest request);
  // Finishes the requests with `status` (aborted, or stopped by a stop string); their blocks are
  // freed at once. Returns their final outputs.
  std::vector<EngineCoreOutput> FinishRequests(const std::vector<std::string>& request_ids,
                                               RequestStatus status);
  // One schedule → execute → sample → update round.
  Expected<std::vector<EngineCoreOutput>> Step();

  bool HasUnfinishedRequests() const { return scheduler_->HasUnfinishedRequests(); }
  EngineStats stats() const;
  int64_t max_model_len() const { return config_.max_model_len; }
  int64_t num_kv_blocks() const { return num_kv_blocks_; }
  const KvCacheManager& kv_cache() const { return *kv_cache_; }
  // Whether this core runs pooling requests (--runner) instead of generation.
  bool is_pooling() const { return is_pooling_; }

  // vLLM's sleep mode (sleep_mode.cc): with no request unfinished, frees the KV cache storage
  // (its prefix cache is forgotten); WakeUp maps it again. While asleep, requests are refused.
  Status Sleep();
  Status WakeUp();
  bool is_sleeping() const { return !runner_->has_kv_cache(); }
  // The runner's KV storage (null while sleeping), for a tensor-parallel model's other ranks.
  const KvStorage* kv_storage() const { return runner_->kv_cache(); }
  // Forgets every cached prefix block; false (nothing done) while some request holds blocks.
  bool ResetPrefixCache() { return kv_cache_->ResetPrefixCache(); }

 private:
  EngineCore(Model& model, const EngineArgs& args) : model_(model), config_(args) {}
  // Drops what the core and the runner keep of a finished request.
  void Forget(const std::string& request_id);
  // The runner's step over the scheduled requests: sampling, or pooling on a pooling runner.
  Expected<ModelRunnerOutput> Execute(const SchedulerOutput& schedule);
  // vLLM's update_from_output: the scheduler takes the sampled tokens, then every scheduled
  // request that got tokens, finished or scored prompt tokens gets its output, in scheduled order.
  std::vector<EngineCoreOutput> UpdateFromOutput(const SchedulerOutput& schedule,
                                                 ModelRunnerOutput runner_output);

  Model& model_;
  EngineArgs config_;
  int64_t num_kv_blocks_ = 0;
  std::unique_ptr<KvCacheManager> kv_cache_;
  std::unique_ptr<Scheduler> scheduler_;
  LoadedModel draft_model_;  // speculative decoding's draft model, if any; outlives runner_
  std::unique_ptr<ModelRunner> runner_;
  int64_t last_num_scheduled_tokens_ = 0;
  int64_t peak_kv_blocks_in_use_ = 0;
  int64_t kv_bytes_per_block_ = 0;
  SpecDecodingStats spec_decoding_stats_;
  IterationTokensStats iteration_tokens_stats_;
  bool is_pooling_ = false;
  std::map<std::string, PoolingSpec> pooling_specs_;  // by request id, while unfinished
};

}  // namespace vllm
