#include "engine/engine_core.h"

#include <algorithm>

#include "common/logging.h"
#include "engine/kv_cache_sizing.h"

namespace vllm {
namespace {

static_assert(KvCacheManager::kNullBlockId == KvStorage::kNullBlockId,
              "the model must recognize the KV cache manager's null block");

SamplingOptions ToSamplingOptions(const SamplingParams& params) {
  SamplingOptions options;
  options.temperature = params.temperature;
  options.top_k = params.top_k;
  options.top_p = params.top_p;
  options.min_p = params.min_p;
  if (params.seed) options.seed = static_cast<uint64_t>(*params.seed);
  return options;
}

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

}  // namespace

Expected<std::unique_ptr<EngineCore>> EngineCore::Create(Model& model, const EngineArgs& args) {
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
  if (core->config_.max_model_len <= 0) {
    core->config_.max_model_len = model_config.max_position_embeddings;
  }
  if (core->config_.block_size <= 0 || core->config_.max_num_seqs <= 0 ||
      core->config_.max_num_batched_tokens <= 0) {
    return Error{"--block-size, --max-num-seqs and --max-num-batched-tokens must be positive"};
  }
  // KV cache groups of layers sharing a block table (vLLM's hybrid KV cache manager).
  const KvCacheLayout layout = core->config_.disable_hybrid_kv_cache_manager
                                   ? SingleGroupKvCacheLayout(model_config.num_layers)
                                   : KvCacheLayoutOf(model_config);
  Expected<KvCacheSize> size = SizeKvCache(model_config, layout, core->config_);
  if (!size) return Error{size.error()};
  core->num_kv_blocks_ = size->num_blocks;
  // The KV storage first: it is allocated and made resident here, and one too large for the
  // memory available must fail before anything sized by it is built.
  auto runner = ModelRunner::Create(model, {.num_kv_blocks = core->num_kv_blocks_,
                                            .block_size = core->config_.block_size,
                                            .kv_cache_layout = layout});
  if (!runner) return Error{runner.error()};
  core->runner_ = std::move(*runner);
  VLLM_LOG(kInfo) << "KV cache: " << core->num_kv_blocks_ << " blocks of "
                  << core->config_.block_size << " tokens x " << layout.group_size << " layers ("
                  << layout.num_groups() << " KV cache group"
                  << (layout.num_groups() == 1 ? "" : "s") << ", "
                  << core->num_kv_blocks_ * size->bytes_per_block / (1 << 20) << " MiB"
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
                      .policy = policy},
      *core->kv_cache_);
  return core;
}

Status EngineCore::AddRequest(EngineCoreRequest core_request) {
  if (std::string error = core_request.params.Validate(); !error.empty()) return Error{error};
  auto request = std::make_unique<Request>();
  request->request_id = core_request.request_id;
  request->prompt_token_ids = std::move(core_request.prompt_token_ids);
  request->params = core_request.params;
  request->eos_token_id = core_request.eos_token_id;
  request->priority = core_request.priority;
  request->cache_keys.cache_salt = core_request.cache_salt;
  const int64_t vocab_size = model_.config().vocab_size;
  for (int32_t id : request->prompt_token_ids) {
    if (id < 0 || id >= vocab_size) {
      return Error{"token id " + std::to_string(id) + " is out of vocabulary (size " +
                   std::to_string(vocab_size) + ")"};
    }
  }
  const std::string id = request->request_id;
  VLLM_RETURN_IF_ERROR(scheduler_->AddRequest(std::move(request)));
  sampling_states_.erase(id);
  sampling_states_.emplace(id, SamplingState{Sampler(ToSamplingOptions(core_request.params)),
                                             std::move(core_request.bad_words_token_ids)});
  return Status::Ok();
}

std::vector<EngineCoreOutput> EngineCore::FinishRequests(
    const std::vector<std::string>& request_ids, RequestStatus status) {
  std::vector<EngineCoreOutput> outputs;
  for (auto& request : scheduler_->FinishRequests(request_ids, status)) {
    sampling_states_.erase(request->request_id);
    outputs.push_back(OutputOf(*request, {}));
  }
  return outputs;
}

Expected<std::vector<EngineCoreOutput>> EngineCore::Step() {
  SchedulerOutput schedule = scheduler_->Schedule();
  last_num_scheduled_tokens_ = schedule.total_num_scheduled_tokens;
  if (schedule.scheduled.empty()) return std::vector<EngineCoreOutput>();

  // Each scheduled request's new tokens: [num_computed, num_computed + num_new) of prompt+output.
  // Logits rows: the chunk's last token, or all its tokens while prompt logprobs are wanted.
  std::vector<std::vector<int32_t>> new_tokens(schedule.scheduled.size());
  std::vector<SequenceChunk> chunks;
  std::vector<int64_t> first_row(schedule.scheduled.size(), -1);
  int64_t num_rows = 0;
  for (size_t i = 0; i < schedule.scheduled.size(); ++i) {
    const ScheduledRequest& scheduled = schedule.scheduled[i];
    const Request& request = *scheduled.request;
    const int64_t begin = request.num_computed_tokens;
    const int64_t end = begin + scheduled.num_new_tokens;
    for (int64_t t = begin; t < end; ++t) new_tokens[i].push_back(request.token(t));
    const bool reaches_end = end == request.num_tokens();
    const bool all_rows = request.params.prompt_logprobs &&
                          sampling_states_.at(request.request_id).num_prompt_logprobs < end &&
                          begin < request.num_prompt_tokens();
    chunks.push_back({new_tokens[i], static_cast<int32_t>(begin), scheduled.block_tables,
                      reaches_end, all_rows});
    if (all_rows || reaches_end) first_row[i] = num_rows;
    num_rows += all_rows ? scheduled.num_new_tokens : (reaches_end ? 1 : 0);
  }
  // Time in the waiting queue, reported with the request's first output after it.
  std::map<std::string, double> queue_seconds;
  const auto now = std::chrono::steady_clock::now();
  for (const ScheduledRequest& scheduled : schedule.scheduled) {
    SamplingState& state = sampling_states_.at(scheduled.request->request_id);
    if (state.scheduled) continue;
    state.scheduled = true;
    queue_seconds[scheduled.request->request_id] =
        std::chrono::duration<double>(now - state.added_at).count();
  }
  auto logits = runner_->Execute(chunks);
  if (!logits) return Error{logits.error()};

  const int64_t vocab_size = model_.config().vocab_size;
  std::vector<SampledToken> sampled;
  std::map<std::string, TokenLogprobs> logprobs;
  std::map<std::string, std::vector<TokenLogprobs>> prompt_logprobs;
  for (size_t i = 0; i < schedule.scheduled.size(); ++i) {
    if (first_row[i] < 0) continue;
    const Request& request = *schedule.scheduled[i].request;
    SamplingState& state = sampling_states_.at(request.request_id);
    const int64_t begin = request.num_computed_tokens;
    if (chunks[i].wants_all_logits) {
      // Row of position p predicts prompt token p + 1; each is reported once, even after a
      // preemption recomputes it.
      for (int64_t p = begin; p < begin + schedule.scheduled[i].num_new_tokens; ++p) {
        if (p + 1 >= request.num_prompt_tokens() || p + 1 <= state.num_prompt_logprobs) continue;
        prompt_logprobs[request.request_id].push_back(
            ComputeLogprobs(logits->data() + (first_row[i] + p - begin) * vocab_size, vocab_size,
                            request.prompt_token_ids[p + 1], *request.params.prompt_logprobs));
        state.num_prompt_logprobs = p + 1;
      }
    }
    if (!chunks[i].wants_logits) continue;
    const int64_t last_row =
        first_row[i] + (chunks[i].wants_all_logits ? schedule.scheduled[i].num_new_tokens - 1 : 0);
    float* row = logits->data() + last_row * vocab_size;
    // Logprobs come from the raw logits, before any processing (vLLM's default mode).
    std::vector<float> raw;
    if (request.params.logprobs) raw.assign(row, row + vocab_size);
    LogitsContext context{request.prompt_token_ids, request.output_token_ids,
                          state.bad_words_token_ids, request.params.stop_token_ids};
    if (request.eos_token_id && !request.params.ignore_eos) {
      context.min_tokens_stop_ids.push_back(*request.eos_token_id);
    }
    ApplyLogitsProcessors(request.params, context, vocab_size, row);
    const int32_t token = state.sampler.Sample(row, vocab_size);
    sampled.push_back({request.request_id, token});
    if (request.params.logprobs) {
      logprobs[request.request_id] =
          ComputeLogprobs(raw.data(), vocab_size, token, *request.params.logprobs);
    }
  }
  Scheduler::StepResult result = scheduler_->Update(schedule, sampled);
  std::vector<EngineCoreOutput> outputs;
  auto logprobs_of = [&logprobs](const Request& request) {
    auto it = logprobs.find(request.request_id);
    return it == logprobs.end() ? std::vector<TokenLogprobs>() : std::vector{it->second};
  };
  auto add_output = [&](const Request& request, std::vector<int32_t> new_token_ids) {
    outputs.push_back(OutputOf(request, std::move(new_token_ids), logprobs_of(request)));
    if (auto it = queue_seconds.find(request.request_id); it != queue_seconds.end()) {
      outputs.back().queue_seconds = it->second;
      queue_seconds.erase(it);
    }
    if (auto it = prompt_logprobs.find(request.request_id); it != prompt_logprobs.end()) {
      outputs.back().new_prompt_logprobs = std::move(it->second);
      prompt_logprobs.erase(it);
    }
  };
  for (Request* request : result.updated) add_output(*request, {request->output_token_ids.back()});
  for (auto& request : result.finished) {
    sampling_states_.erase(request->request_id);
    add_output(*request, {request->output_token_ids.back()});
  }
  // Prefill chunks that produced prompt logprobs but no token yet.
  for (const ScheduledRequest& scheduled : schedule.scheduled) {
    if (prompt_logprobs.count(scheduled.request->request_id) != 0) {
      add_output(*scheduled.request, {});
    }
  }
  return outputs;
}

EngineStats EngineCore::stats() const {
  return {scheduler_->num_running(),
          scheduler_->num_waiting(),
          kv_cache_->usage(),
          kv_cache_->num_free_blocks(),
          scheduler_->num_preemptions(),
          kv_cache_->stats().prefix_cache_queries,
          kv_cache_->stats().prefix_cache_hits,
          last_num_scheduled_tokens_};
}

}  // namespace vllm
