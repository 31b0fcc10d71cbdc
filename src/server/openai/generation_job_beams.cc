// GenerationJob's beam search (use_beam_search), as vLLM's OpenAI server runs it: every step
// submits one single-token request per live beam (prompt = the beam's tokens, which the prefix
// cache mostly holds already), and the search advances on the strand once they have all ended.
// The HTTP threads never wait on it; a client that goes away aborts the step under way.
#include "server/openai/generation_job.h"
#include "tokenizer/tokenizer.h"

namespace vllm::server {

std::string GenerationJob::BeamRequestId(size_t prompt_index, size_t beam) const {
  return EngineRequestId(prompt_index) + "-beam-" +
         std::to_string(progress_[prompt_index].num_beam_steps) + "-" + std::to_string(beam);
}

void GenerationJob::StartBeamSearch(size_t prompt_index) {
  const PromptInputs& prompt = prompts_[prompt_index];
  BeamSearch::Options options{
      .params = BeamSearchParamsOf(request_, prompt.params->max_tokens.value_or(1)),
      .eos_token_id = context_.engine.tokenizer().eos_id(),
      .max_model_len = context_.engine.max_model_len()};
  progress_[prompt_index].beams = std::make_unique<BeamSearch>(prompt.token_ids, options);
  SubmitBeamStep(prompt_index);
}

void GenerationJob::SubmitBeamStep(size_t prompt_index) {
  PromptProgress& progress = progress_[prompt_index];
  const std::vector<BeamSearchSequence>& beams = progress.beams->live_beams();
  ++progress.num_beam_steps;
  progress.step_outputs.assign(beams.size(), std::nullopt);
  progress.step_streams.assign(beams.size(), nullptr);
  for (size_t b = 0; b < beams.size(); ++b) {
    progress.step_streams[b] =
        context_.engine.Submit(BeamRequestId(prompt_index, b), beams[b].tokens,
                               *request_.beam_search_step, request_.options, Listener());
  }
}

void GenerationJob::DrainBeamStep(size_t prompt_index) {
  PromptProgress& progress = progress_[prompt_index];
  if (progress.ended) return;
  bool step_complete = true;
  for (size_t b = 0; b < progress.step_streams.size(); ++b) {
    std::shared_ptr<RequestOutputStream>& stream = progress.step_streams[b];
    if (!stream) continue;  // already read
    while (auto output = stream->TryNext()) {
      if (output->finished) progress.step_outputs[b] = std::move(*output);
    }
    if (progress.step_outputs[b]) {
      stream.reset();
    } else if (stream->done()) {  // ended without an output: the engine refused or failed it
      if (!failed_) {
        failed_ = true;
        const std::string message = stream->error();
        const bool rejected = stream->rejected();
        AbortAll();
        SendError(rejected ? ApiError::BadRequest(message) : ApiError::Internal(message));
      }
      stream.reset();
    } else {
      step_complete = false;
    }
  }
  if (!step_complete) return;
  if (failed_ || beams_aborted_) {
    progress.ended = true;
    return;
  }
  // Each beam's next-token logprobs; none for a beam whose request could not grow.
  std::vector<std::optional<PositionLogprobs>> next(progress.step_outputs.size());
  for (size_t b = 0; b < next.size(); ++b) {
    const RequestOutput& output = *progress.step_outputs[b];
    if (output.outputs.empty() || !output.outputs[0].logprobs ||
        output.outputs[0].logprobs->empty()) {
      continue;
    }
    next[b] = output.outputs[0].logprobs->front();
  }
  progress.beams->Advance(next);
  if (!progress.beams->done()) {
    SubmitBeamStep(prompt_index);
    return;
  }
  progress.merged = BeamSearchOutputOf(prompt_index);
  Account(progress, progress.merged);
  progress.has_output = true;
  progress.ended = true;
  if (request_.stream) OnDelta(prompt_index, progress.merged);
}

RequestOutput GenerationJob::BeamSearchOutputOf(size_t prompt_index) const {
  const PromptProgress& progress = progress_[prompt_index];
  const size_t num_prompt_tokens = progress.beams->num_prompt_tokens();
  RequestOutput output;
  output.request_id = EngineRequestId(prompt_index);
  output.prompt = prompts_[prompt_index].text;
  output.prompt_token_ids = prompts_[prompt_index].token_ids;
  output.finished = true;
  const BeamSearchOutput result = progress.beams->Finish();
  for (size_t k = 0; k < result.sequences.size(); ++k) {
    const BeamSearchSequence& beam = result.sequences[k];
    CompletionOutput completion;
    completion.index = static_cast<int>(k);
    completion.token_ids.assign(beam.tokens.begin() + num_prompt_tokens, beam.tokens.end());
    completion.logprobs = beam.logprobs;
    // An EOS that ended the beam is not in its text, nor in its tokens unless asked for.
    const bool ended_by_eos = beam.finish_reason == "stop";
    std::vector<int32_t> text_ids = completion.token_ids;
    if (ended_by_eos) text_ids.pop_back();
    if (ended_by_eos && !request_.params.include_stop_str_in_output) {
      completion.token_ids.pop_back();
      completion.logprobs->pop_back();
    }
    completion.text =
        context_.engine.tokenizer().Decode(text_ids, request_.params.skip_special_tokens);
    completion.cumulative_logprob = beam.cum_logprob;
    completion.finish_reason = beam.finish_reason.empty() ? "length" : beam.finish_reason;
    completion.stop_reason = beam.stop_reason;
    output.outputs.push_back(std::move(completion));
  }
  return output;
}

void GenerationJob::AbortBeamSteps() {
  for (size_t i = 0; i < progress_.size(); ++i) {
    const PromptProgress& progress = progress_[i];
    for (size_t b = 0; b < progress.step_streams.size(); ++b) {
      if (progress.step_streams[b]) context_.engine.Abort(BeamRequestId(i, b));
    }
  }
  beams_aborted_ = true;
}

}  // namespace vllm::server
