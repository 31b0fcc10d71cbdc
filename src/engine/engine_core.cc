#include "engine/engine_core.h"

#include <algorithm>
#include <string>
#include <utility>

#include "common/logging.h"
#include "engine/engine_args_check.h"
#include "engine/kv_cache_sizing.h"
#include "engine/pooling_tasks.h"
#include "engine/speculative_config.h"

namespace vllm {
namespace {

static_assert(KvCacheManager::kNullBlockId == KvStorage::kNullBlockId,
              "the model must recognize the KV cache manager's null block");

EngineCoreOutput OutputOf(const Request& request, std::vector<int32_t> new_token_ids,
                          std::vector<TokenLogprobs> new_logprobs = {}) {
  EngineCoreOutput output;
  output.request_id = request.request_id;
  output.new_token_ids = std::move(new_token_ids);
  output.new_logprobs = std::move(new_logprobs);
  output.status = request.status;
  output.stop_token_id = request.stop_token_id;
  output.num_cached_tokens = std::max<int64_t>(0, request.num_cached_tokens);
  return output;
}

// Loads --speculative-config's draft model onto the target's thread pool, with the target's
// --dtype (its weights otherwise as stored) and the engine's max_model_len, and checks it fits.
Expected<LoadedModel> LoadDraftModel(const std::string& path, const ModelConfig& target,
                                     const EngineArgs& args, ThreadPool* pool) {
  if (pool == nullptr) return Error{"a draft model needs the engine's thread pool"};
  auto linear_type = LinearTypeFor(args.dtype, "");
  if (!linear_type) return Error{linear_type.error()};
  auto draft = LoadModelFromPath(
      path, {.pool = pool, .linear_type = *linear_type, .max_model_len = args.max_model_len});
  if (!draft) return Error{"--speculative-config: draft model: " + draft.error()};
  VLLM_RETURN_IF_ERROR(CheckDraftModel(target, draft->model->config(), args.max_model_len));
  return draft;
}

// vLLM's check of a request's logprobs and prompt_logprobs against max_logprobs (-1: no limit);
// a request's -1 asks for the whole vocabulary.
Status CheckLogprobsLimit(const SamplingParams& params, int max_logprobs, int64_t vocab_size) {
  const int64_t limit = max_logprobs == -1 ? vocab_size : max_logprobs;
  auto requested = [vocab_size](int num) { return num == -1 ? vocab_size : int64_t{num}; };
  if (params.logprobs && requested(*params.logprobs) > limit) {
    return Error{"Requested sample logprobs of " + std::to_string(requested(*params.logprobs)) +
                 ", which is greater than max allowed: " + std::to_string(limit)};
  }
  if (params.prompt_logprobs && requested(*params.prompt_logprobs) > limit) {
    return Error{"Requested prompt logprobs of " +
                 std::to_string(requested(*params.prompt_logprobs)) +
                 ", which is greater than max allowed: " + std::to_string(limit)};
  }
  return Status::Ok();
}

}  // namespace

Expected<std::unique_ptr<EngineCore>> EngineCore::Create(Model& model, const EngineArgs& args,
                                                         ThreadPool* pool) {
  std::unique_ptr<EngineCore> core(new EngineCore(model, args));
  SchedulingPolicy policy;
  if (args.scheduling_policy == "fcfs") {
    policy = SchedulingPolicy::kFcfs;
  } else if (args.scheduling_policy == "priority") {
    policy = SchedulingPolicy::kPriority;
  } else {
    return Error{"--scheduling-policy must be fcfs or priority, got '" + args.scheduling_policy +
                 "'"};
  }
  const ModelConfig& model_config = model.config();
  int64_t derived_max_model_len = model_config.DerivedMaxModelLen();
  const bool caps_to_window = args.disable_sliding_window && model_config.sliding_window > 0;
  if (caps_to_window) {
    // Windows that look both ways (W / 2 each side) hold fewer positions than the context.
    if (model_config.is_encoder || model_config.bidirectional_attention) {
      return Error{"--disable-sliding-window: " + model_config.architecture +
                   " attends bidirectionally within its window, which this build cannot disable"};
    }
    derived_max_model_len = derived_max_model_len > 0
                                ? std::min(derived_max_model_len, model_config.sliding_window)
                                : model_config.sliding_window;
  }
  VLLM_RETURN_IF_ERROR(CheckMaxModelLen(core->config_.max_model_len, derived_max_model_len));
  if (core->config_.max_model_len <= 0) core->config_.max_model_len = derived_max_model_len;
  auto is_pooling = UsesPoolingRunner(args, model_config);
  if (!is_pooling) return Error{is_pooling.error()};
  core->is_pooling_ = *is_pooling;
  // Pooling prompts are computed whole in one step.
  if (core->is_pooling_) {
    core->config_.max_num_batched_tokens =
        std::max(core->config_.max_num_batched_tokens, core->config_.max_model_len);
  }
  if (core->config_.block_size <= 0 || core->config_.max_num_seqs <= 0 ||
      core->config_.max_num_batched_tokens <= 0) {
    return Error{"--block-size, --max-num-seqs and --max-num-batched-tokens must be positive"};
  }
  // KV cache groups of layers sharing a block table (vLLM's hybrid KV cache manager).
  // Within the window nothing leaves it: capped to it, every layer keeps all its blocks.
  const KvCacheLayout layout = core->config_.disable_hybrid_kv_cache_manager || caps_to_window
                                   ? SingleGroupKvCacheLayout(model_config.num_layers)
                                   : KvCacheLayoutOf(model_config);
  std::optional<NgramProposer::Options> ngram_proposer;
  std::optional<DraftModelProposer::Options> draft_model_proposer;
  if (core->config_.speculative_config) {
    auto method = ResolveSpeculativeConfig(*core->config_.speculative_config);
    if (!method) return Error{method.error()};
    // A step never drafts past max_model_len, so more drafts could never be proposed.
    if (method->num_speculative_tokens >= core->config_.max_model_len) {
      return Error{"--speculative-config: num_speculative_tokens=" +
                   std::to_string(method->num_speculative_tokens) +
                   " must be less than max_model_len (" +
                   std::to_string(core->config_.max_model_len) + ")"};
    }
    if (method->ngram) {
      ngram_proposer = method->ngram;
      VLLM_LOG(kInfo) << "Speculative decoding: ngram, " << method->num_speculative_tokens
                      << " draft tokens per step, prompt lookup n-grams of "
                      << method->ngram->prompt_lookup_min << " to "
                      << method->ngram->prompt_lookup_max << " tokens";
    } else {
      auto draft = LoadDraftModel(method->draft_model, model_config, core->config_, pool);
      if (!draft) return Error{draft.error()};
      core->draft_model_ = std::move(*draft);
      const ModelConfig& draft_config = core->draft_model_.model->config();
      draft_model_proposer = DraftModelProposer::Options{
          .model = core->draft_model_.model.get(),
          .num_speculative_tokens = method->num_speculative_tokens,
          .max_model_len = core->config_.max_model_len,
          .max_num_batched_tokens = core->config_.max_num_batched_tokens};
      VLLM_LOG(kInfo) << "Speculative decoding: draft model " << method->draft_model << " ("
                      << draft_config.architecture << ", " << draft_config.num_layers
                      << " layers), " << method->num_speculative_tokens << " draft tokens per step";
    }
  }
  const ModelConfig* draft_config =
      core->draft_model_.model ? &core->draft_model_.model->config() : nullptr;
  // An encoder reads no KV cache: its storage and block pool are kept minimal.
  Expected<KvCacheSize> size = model_config.is_encoder
                                   ? Expected<KvCacheSize>(KvCacheSize{.num_blocks = 2})
                                   : SizeKvCache(model_config, layout, core->config_, draft_config);
  if (!size) return Error{size.error()};
  core->num_kv_blocks_ = size->num_blocks;
  core->kv_bytes_per_block_ = size->bytes_per_block;
  // The KV storage first: it is allocated and made resident here, and one too large for the
  // memory available must fail before anything sized by it is built.
  auto runner = ModelRunner::Create(model, {.num_kv_blocks = core->num_kv_blocks_,
                                            .block_size = core->config_.block_size,
                                            .kv_cache_layout = layout,
                                            .ngram_proposer = ngram_proposer,
                                            .draft_model_proposer = draft_model_proposer,
                                            .kv_cache_dtype = size->dtype,
                                            .pool = pool});
  if (!runner) return Error{runner.error()};
  core->runner_ = std::move(*runner);
  VLLM_LOG(kInfo) << "KV cache: " << core->num_kv_blocks_ << " blocks of "
                  << core->config_.block_size << " tokens x " << layout.group_size << " layers, "
                  << kernels::KvCacheDtypeName(size->dtype) << " (" << layout.num_groups()
                  << " KV cache group" << (layout.num_groups() == 1 ? "" : "s") << ", "
                  << core->num_kv_blocks_ * size->bytes_per_block / (1 << 20) << " MiB"
                  << (draft_config
                          ? ", the draft model's " + std::to_string(size->draft_bytes_per_block) +
                                " of " + std::to_string(size->bytes_per_block) +
                                " bytes per block included"
                          : "")
                  << (size->capped_by_sequences
                          ? ", capped to what --max-num-seqs sequences of --max-model-len use"
                          : "")
                  << "), resident";
  std::vector<KvCacheGroupSpec> groups;
  for (const KvCacheLayout::Group& group : layout.groups) {
    groups.push_back({.sliding_window = group.sliding_window});
  }
  core->kv_cache_ = std::make_unique<KvCacheManager>(
      KvCacheManager::Options{.num_blocks = static_cast<int32_t>(core->num_kv_blocks_),
                              .block_size = core->config_.block_size,
                              .enable_prefix_caching = core->config_.enable_prefix_caching,
                              .groups = std::move(groups)});
  core->scheduler_ = std::make_unique<Scheduler>(
      SchedulerConfig{.max_num_seqs = core->config_.max_num_seqs,
                      .max_num_batched_tokens = core->config_.max_num_batched_tokens,
                      .max_model_len = core->config_.max_model_len,
                      .policy = policy,
                      .num_lookahead_tokens =
                          draft_model_proposer ? draft_model_proposer->num_speculative_tokens : 0,
                      .max_loras = core->config_.enable_lora ? core->config_.max_loras : 0},
      *core->kv_cache_);
  return core;
}

Status EngineCore::AddRequest(EngineCoreRequest core_request) {
  if (is_sleeping()) {
    return Error{
        "the engine is sleeping (its KV cache is freed): call wake_up() before adding "
        "requests"};
  }
  // params were validated once, at the edge (LLMEngine::AddRequest), not again per child here.
  VLLM_RETURN_IF_ERROR(
      CheckLogprobsLimit(core_request.params, config_.max_logprobs, model_.config().vocab_size));
  auto request = std::make_unique<Request>();
  request->request_id = core_request.request_id;
  request->prompt_token_ids = std::move(core_request.prompt_token_ids);
  request->params = core_request.params;
  request->eos_token_id = core_request.eos_token_id;
  request->priority = core_request.priority;
  request->cache_keys.cache_salt = core_request.cache_salt;
  if (core_request.lora != nullptr) {
    if (!config_.enable_lora) {
      return Error{"LoRA adapter '" + core_request.lora->name + "' given but LoRA is not enabled"};
    }
    // The encoder's layers apply no adapter: refused rather than run as the base model.
    if (model_.config().is_encoder) {
      return Error{"LoRA adapter '" + core_request.lora->name +
                   "' given, but vllm-cpp applies LoRA adapters to decoder models only, not to "
                   "encoder-only " +
                   model_.config().architecture};
    }
    request->cache_keys.lora_id = core_request.lora->id;
  }
  const int64_t vocab_size = model_.config().vocab_size;
  for (int32_t id : request->prompt_token_ids) {
    if (id < 0 || id >= vocab_size) {
      return Error{"token id " + std::to_string(id) + " is out of vocabulary (size " +
                   std::to_string(vocab_size) + ")"};
    }
  }
  if (core_request.pooling.has_value() != is_pooling_) {
    return Error{is_pooling_ ? "LLM.generate() is only supported for generative models. Try "
                               "passing `--runner generate` to use the model as a generative "
                               "model."
                             : "Pooling tasks are only supported by pooling models. Try passing "
                               "`--runner pooling` to use the model as a pooling model."};
  }
  if (core_request.prompt_embeds &&
      (core_request.prompt_embeds->num_tokens != request->num_prompt_tokens() ||
       core_request.prompt_embeds->hidden_size != model_.config().hidden_size ||
       !model_.accepts_input_embeds())) {
    return Error{
        "prompt embeddings need a model that takes them and one row of hidden_size per "
        "prompt token"};
  }
  request->is_pooling = is_pooling_;
  request->uses_kv_cache = !model_.config().is_encoder;
  const std::string id = request->request_id;
  VLLM_RETURN_IF_ERROR(scheduler_->AddRequest(std::move(request)));
  if (is_pooling_) {
    pooling_specs_[id] = std::move(*core_request.pooling);
    runner_->AddPoolingRequest(id, std::move(core_request.lora));
    return Status::Ok();
  }
  runner_->AddRequest(
      id,
      {.params = std::move(core_request.params),
       .bad_words_token_ids = std::move(core_request.bad_words_token_ids),
       .eos_token_id = core_request.eos_token_id,
       .grammar = std::move(core_request.grammar),
       .grammar_after_token_ids = std::move(core_request.grammar_after_token_ids),
       // Checked by CheckEngineArgs.
       .logprobs_mode =
           ParseLogprobsMode(config_.logprobs_mode).value_or(LogprobsMode::kRawLogprobs)},
      std::move(core_request.prompt_embeds), std::move(core_request.lora));
  return Status::Ok();
}

std::vector<EngineCoreOutput> EngineCore::FinishRequests(
    const std::vector<std::string>& request_ids, RequestStatus status) {
  std::vector<EngineCoreOutput> outputs;
  for (auto& request : scheduler_->FinishRequests(request_ids, status)) {
    Forget(request->request_id);
    outputs.push_back(OutputOf(*request, {}));
  }
  return outputs;
}

Expected<std::vector<EngineCoreOutput>> EngineCore::Step() {
  SchedulerOutput schedule = scheduler_->Schedule();
  for (const std::string& id : schedule.preempted_request_ids) runner_->PreemptRequest(id);
  last_num_scheduled_tokens_ = schedule.total_num_scheduled_tokens;
  if (last_num_scheduled_tokens_ > 0) iteration_tokens_stats_.Observe(last_num_scheduled_tokens_);
  peak_kv_blocks_in_use_ =
      std::max<int64_t>(peak_kv_blocks_in_use_, kv_cache_->num_blocks_in_use());
  if (schedule.scheduled.empty()) return std::vector<EngineCoreOutput>();
  auto runner_output = Execute(schedule);
  if (!runner_output) return Error{runner_output.error()};
  return UpdateFromOutput(schedule, std::move(*runner_output));
}

Expected<ModelRunnerOutput> EngineCore::Execute(const SchedulerOutput& schedule) {
  std::vector<ScheduledSequence> sequences;
  std::vector<const PoolingSpec*> pooling_specs;
  for (const ScheduledRequest& scheduled : schedule.scheduled) {
    const Request& request = *scheduled.request;
    sequences.push_back({request.request_id, request.prompt_token_ids, request.output_token_ids,
                         request.num_computed_tokens, scheduled.num_new_tokens,
                         scheduled.block_tables, scheduled.spec_token_ids});
    if (is_pooling_) pooling_specs.push_back(&pooling_specs_.at(request.request_id));
  }
  return is_pooling_ ? runner_->ExecutePooling(sequences, pooling_specs)
                     : runner_->Execute(sequences);
}

std::vector<EngineCoreOutput> EngineCore::UpdateFromOutput(const SchedulerOutput& schedule,
                                                           ModelRunnerOutput runner_output) {
  for (size_t i = 0; i < schedule.scheduled.size(); ++i) {
    const auto num_drafts = static_cast<int64_t>(schedule.scheduled[i].spec_token_ids.size());
    const auto num_sampled = static_cast<int64_t>(runner_output.sampled_token_ids[i].size());
    if (num_drafts == 0 || num_sampled == 0) continue;
    spec_decoding_stats_.Observe(num_drafts, num_sampled - 1);  // accepted: all but the last
  }
  // Trims each request's sampled tokens to those it kept; the finished stay alive until here ends.
  const std::vector<std::unique_ptr<Request>> finished =
      scheduler_->Update(schedule, runner_output.sampled_token_ids);
  std::vector<EngineCoreOutput> outputs;
  for (size_t i = 0; i < schedule.scheduled.size(); ++i) {
    Request& request = *schedule.scheduled[i].request;
    // Reported by the step that first scheduled the request, or never.
    const std::optional<double> queue_seconds = std::exchange(request.queue_seconds, std::nullopt);
    std::vector<int32_t>& new_token_ids = runner_output.sampled_token_ids[i];
    const bool is_finished = IsFinished(request.status);
    if (new_token_ids.empty() && !is_finished && runner_output.prompt_logprobs[i].empty()) {
      continue;  // a prefill chunk short of the prompt's end
    }
    std::vector<TokenLogprobs>& new_logprobs = runner_output.logprobs[i];
    new_logprobs.resize(std::min(new_logprobs.size(), new_token_ids.size()));
    EngineCoreOutput& output =
        outputs.emplace_back(OutputOf(request, std::move(new_token_ids), std::move(new_logprobs)));
    output.new_prompt_logprobs = std::move(runner_output.prompt_logprobs[i]);
    output.queue_seconds = queue_seconds;
    output.pooled = std::move(runner_output.pooled[i]);
    if (is_finished) {
      Forget(request.request_id);
    } else if (!runner_output.draft_token_ids[i].empty()) {
      // The drafts it verifies next step (vLLM's update_draft_token_ids).
      scheduler_->UpdateDraftTokens(request.request_id,
                                    std::move(runner_output.draft_token_ids[i]));
    }
  }
  return outputs;
}

void EngineCore::Forget(const std::string& request_id) {
  pooling_specs_.erase(request_id);
  runner_->RemoveRequest(request_id);
}

EngineStats EngineCore::stats() const {
  return {scheduler_->num_running(),
          scheduler_->num_waiting(),
          kv_cache_->usage(),
          kv_cache_->num_free_blocks(),
          scheduler_->num_preemptions(),
          kv_cache_->stats().prefix_cache_queries,
          kv_cache_->stats().prefix_cache_hits,
          last_num_scheduled_tokens_,
          spec_decoding_stats_,
          peak_kv_blocks_in_use_,
          kv_bytes_per_block_,
          iteration_tokens_stats_,
          scheduler_->running_lora_ids(),
          scheduler_->waiting_lora_ids()};
}

}  // namespace vllm
