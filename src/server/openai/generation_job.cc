#include "server/openai/generation_job.h"

#include <algorithm>

#include "common/logging.h"
#include "server/request_log.h"
#include "server/worker_reply.h"

namespace vllm::server {
namespace {

double SecondsBetween(std::chrono::steady_clock::time_point from,
                      std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

int64_t UnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void MergeDelta(const RequestOutput& delta, RequestOutput* merged, bool with_contents) {
  merged->request_id = delta.request_id;
  merged->prompt_token_ids = delta.prompt_token_ids;
  merged->finished = delta.finished;
  merged->num_cached_tokens = delta.num_cached_tokens;
  if (delta.queue_seconds) merged->queue_seconds = delta.queue_seconds;
  if (delta.prefill_seconds) merged->prefill_seconds = delta.prefill_seconds;
  if (delta.decode_seconds) merged->decode_seconds = delta.decode_seconds;
  if (delta.prompt_logprobs && with_contents) merged->prompt_logprobs = delta.prompt_logprobs;
  for (const CompletionOutput& part : delta.outputs) {
    // A delta holds only the sequences with news: sequence i may come without those before it.
    if (merged->outputs.size() <= static_cast<size_t>(part.index)) {
      merged->outputs.resize(part.index + 1);
    }
    CompletionOutput& whole = merged->outputs[part.index];
    whole.index = part.index;
    if (with_contents) {
      whole.text += part.text;
      whole.token_ids.insert(whole.token_ids.end(), part.token_ids.begin(), part.token_ids.end());
      if (part.logprobs) {
        if (!whole.logprobs) whole.logprobs.emplace();
        whole.logprobs->insert(whole.logprobs->end(), part.logprobs->begin(), part.logprobs->end());
      }
    }
    whole.cumulative_logprob = part.cumulative_logprob;
    whole.finish_reason = part.finish_reason;
    whole.stop_reason = part.stop_reason;
  }
}

GenerationJob::GenerationJob(ServingContext& context, std::shared_ptr<ResponseWriter> writer,
                             std::string response_id, GenerationRequest request,
                             std::vector<PromptInputs> prompts)
    : context_(context),
      writer_(std::move(writer)),
      response_id_(std::move(response_id)),
      created_(UnixSeconds()),
      request_(std::move(request)),
      prompts_(std::move(prompts)),
      arrived_at_(std::chrono::steady_clock::now()),
      progress_(prompts_.size()) {}

std::string GenerationJob::EngineRequestId(size_t prompt_index) const {
  return prompts_.size() == 1 ? response_id_ : response_id_ + "-" + std::to_string(prompt_index);
}

void GenerationJob::Start() {
  self_ = shared_from_this();
  std::weak_ptr<GenerationJob> weak = self_;
  active_handle_ = context_.active_requests.Add([weak, writer = writer_] {
    writer->Post([weak] {
      if (auto job = weak.lock())
        job->Cancel(ApiError::Unavailable("The server is shutting down."));
    });
  });
  for (size_t i = 0; i < prompts_.size(); ++i) {
    if (context_.request_log.enabled) {
      VLLM_LOG(kInfo) << RequestLogLine(EngineRequestId(i), prompts_[i].text, prompts_[i].token_ids,
                                        *prompts_[i].params, context_.request_log.max_log_len,
                                        prompts_[i].embeds.get());
    }
    if (request_.use_beam_search) {
      StartBeamSearch(i);
      continue;
    }
    if (prompts_[i].embeds) {
      RequestOptions options = request_.options;
      options.prompt_embeds = prompts_[i].embeds;
      progress_[i].stream = context_.engine.Submit(EngineRequestId(i), std::vector<int32_t>{},
                                                   prompts_[i].params, options, Listener());
      continue;
    }
    progress_[i].stream = context_.engine.Submit(EngineRequestId(i), prompts_[i].token_ids,
                                                 prompts_[i].params, request_.options, Listener());
  }
  if (OutlivesClient()) return;
  writer_->OnDisconnect([weak] {  // runs at once if the client has already gone
    if (auto job = weak.lock()) job->AbortAll();
  });
}

std::function<void()> GenerationJob::Listener() {
  std::weak_ptr<GenerationJob> weak = self_;
  return [weak, writer = writer_] {
    writer->Post([weak] {
      if (auto job = weak.lock()) job->Drain();
    });
  };
}

void GenerationJob::Account(PromptProgress& progress, const RequestOutput& delta) {
  int64_t num_new_tokens = 0;
  for (const CompletionOutput& part : delta.outputs) {
    num_new_tokens += static_cast<int64_t>(part.token_ids.size());
    if (progress.num_generated_by_sequence.size() <= static_cast<size_t>(part.index)) {
      progress.num_generated_by_sequence.resize(part.index + 1);
    }
    progress.num_generated_by_sequence[part.index] += static_cast<int64_t>(part.token_ids.size());
  }
  const auto now = std::chrono::steady_clock::now();
  if (num_new_tokens > 0) {
    if (progress.num_generated == 0) {
      context_.metrics.ObserveTimeToFirstToken(SecondsBetween(arrived_at_, now));
    } else {
      context_.metrics.ObserveInterTokenLatency(SecondsBetween(progress.last_token_at, now));
    }
    progress.last_token_at = now;
    progress.num_generated += num_new_tokens;
  }
  if (!progress.has_output) {
    context_.metrics.AddTokens(static_cast<int64_t>(delta.prompt_token_ids.size()), 0);
  }
  context_.metrics.AddTokens(0, num_new_tokens);
  if (delta.finished) {
    RequestRecord record;
    record.queue_seconds = progress.merged.queue_seconds.value_or(0.0);
    record.e2e_seconds = SecondsBetween(arrived_at_, now);
    record.num_prompt_tokens = static_cast<int64_t>(delta.prompt_token_ids.size());
    record.num_generation_tokens = progress.num_generated;
    for (const CompletionOutput& whole : progress.merged.outputs) {
      record.finish_reasons.push_back(whole.finish_reason);
    }
    const SamplingParams& params = *prompts_[&progress - progress_.data()].params;
    record.n = params.n;
    record.max_tokens =
        params.max_tokens.value_or(context_.engine.max_model_len() - record.num_prompt_tokens);
    for (int64_t count : progress.num_generated_by_sequence) {
      record.max_num_generation_tokens = std::max(record.max_num_generation_tokens, count);
    }
    record.prefill_seconds = progress.merged.prefill_seconds.value_or(0.0);
    record.decode_seconds = progress.merged.decode_seconds.value_or(0.0);
    context_.metrics.FinishRequest(record);
  }
}

void GenerationJob::Drain() {
  if (!self_) return;  // already complete
  bool all_ended = true;
  for (size_t i = 0; i < progress_.size(); ++i) {
    PromptProgress& progress = progress_[i];
    if (progress.beams) {
      DrainBeamStep(i);
      all_ended = all_ended && progress.ended;
      continue;
    }
    if (progress.ended || !progress.stream) continue;
    while (auto delta = progress.stream->TryNext()) {
      // A stream sends each delta as it comes: only a whole response needs them kept.
      MergeDelta(*delta, &progress.merged, /*with_contents=*/!request_.stream);
      Account(progress, *delta);
      progress.has_output = true;
      if (request_.stream && !failed_) OnDelta(i, *delta);
      if (delta->finished) progress.ended = true;
    }
    if (!progress.ended && progress.stream->done()) {
      // The stream ended without a final output: the engine refused or failed the request.
      progress.ended = true;
      if (!failed_) {
        failed_ = true;
        const std::string message = progress.stream->error();
        AbortAll();
        SendError(progress.stream->overloaded() ? ApiError::Unavailable(message)
                  : progress.stream->rejected() ? ApiError::BadRequest(message)
                                                : ApiError::Internal(message));
      }
    }
    all_ended = all_ended && progress.ended;
  }
  if (!all_ended) return;
  if (!failed_ && request_.stream) {
    FinishStream();
  } else if (!failed_) {
    std::vector<RequestOutput> outputs;
    for (PromptProgress& progress : progress_) outputs.push_back(std::move(progress.merged));
    auto build = [job = self_, outputs = std::move(outputs), usage = Usage()] {
      std::string body = DumpJson(job->BuildResponse(outputs, usage));
      PostResponse(job->writer_, http::status::ok, "application/json", std::move(body));
    };
    if (!context_.workers.TrySubmit(build)) build();  // the workers are saturated: build here
  }
  Finish();
}

void GenerationJob::Cancel(const ApiError& error) {
  if (!self_ || failed_) return;
  failed_ = true;
  AbortAll();
  SendError(error);
  Finish();
}

void GenerationJob::Finish() {
  context_.active_requests.Remove(active_handle_);
  self_.reset();
}

void GenerationJob::AbortAll() {
  for (size_t i = 0; i < progress_.size(); ++i) {
    if (!progress_[i].ended && progress_[i].stream) context_.engine.Abort(EngineRequestId(i));
  }
  AbortBeamSteps();
}

void GenerationJob::SendError(const ApiError& error) {
  if (!writer_->started()) {
    writer_->Send(error.status, "application/json", error.ToJson());
    return;
  }
  writer_->SendEvent(error.ToJson());
  writer_->SendEvent("[DONE]");
  writer_->EndEventStream();
}

void GenerationJob::EndStream(Json final_chunk) {
  if (request_.include_usage) {
    final_chunk["usage"] = Usage();
    SendEvent(final_chunk);
  }
  writer_->SendEvent("[DONE]");
  writer_->EndEventStream();
}

Json GenerationJob::Usage() const {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  for (size_t i = 0; i < progress_.size(); ++i) {
    prompt_tokens += static_cast<int64_t>(prompts_[i].token_ids.size());
    completion_tokens += progress_[i].num_generated;
  }
  return {{"prompt_tokens", prompt_tokens},
          {"total_tokens", prompt_tokens + completion_tokens},
          {"completion_tokens", completion_tokens},
          {"prompt_tokens_details", nullptr}};
}

}  // namespace vllm::server
