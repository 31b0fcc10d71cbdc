// One OpenAI generation request running in the engine: one engine request per prompt, whose
// delta outputs arrive on the connection's strand. Subclasses turn them into server-sent events
// as they come (stream) or into one response at the end, built on a request worker. A client
// that goes away has its requests aborted, which frees their KV blocks; a server that shuts
// down ends the job with a 503 (or, mid-stream, an error event and data: [DONE]).
// With use_beam_search, each prompt runs a beam search instead: every step submits one
// single-token engine request per live beam, and the search advances on the strand once they
// have all ended (generation_job_beams.cc); its n best beams become the prompt's one output.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/beam_search.h"
#include "server/http_session.h"
#include "server/openai/api_error.h"
#include "server/openai/generation_request.h"
#include "server/openai/json.h"
#include "server/serving_context.h"
#include "vllm/prompt_embeds.h"

namespace vllm::server {

struct PromptInputs {
  std::vector<int32_t> token_ids;  // placeholders (0) for a prompt given as embeddings
  std::string text;                // for echo; empty for token-id prompts
  ValidatedSamplingParams params;  // the request's, with max_tokens fitted to this prompt
  std::shared_ptr<const PromptEmbeds> embeds;  // the prompt as embeddings (prompt_embeds); or null
};

class GenerationJob : public std::enable_shared_from_this<GenerationJob> {
 public:
  GenerationJob(ServingContext& context, std::shared_ptr<ResponseWriter> writer,
                std::string response_id, GenerationRequest request,
                std::vector<PromptInputs> prompts);
  virtual ~GenerationJob() = default;

  // Submits the engine requests; the job keeps itself alive until they end. On the strand.
  void Start();

 protected:
  // Streaming only: what prompt `prompt_index` produced since its last output.
  virtual void OnDelta(size_t prompt_index, const RequestOutput& delta) = 0;
  // Streaming only: every prompt has ended; ends the event stream.
  virtual void FinishStream() = 0;
  // Not streaming: the response body once every prompt has ended; `outputs[i]` is prompt i's
  // whole output, `usage` the Usage() of the request. Runs on a request worker, so it reads
  // only what does not change once the outputs are complete.
  virtual Json BuildResponse(const std::vector<RequestOutput>& outputs, Json usage) const = 0;
  // True for a job that runs on when its client goes away (a background response); its
  // requests then end only by finishing, an abort by id, or the server's shutdown.
  virtual bool OutlivesClient() const { return false; }

  // Answers with an error: an HTTP error before streaming began, an error event after.
  // Subclasses that keep the outcome elsewhere (the response store) record it, then call this.
  virtual void SendError(const ApiError& error);
  // Ends an event stream: `final_chunk` (a chunk with no choices) with the usage when the request
  // asked for it, then data: [DONE].
  void EndStream(Json final_chunk);
  // Writes an event; `data` is a JSON object.
  void SendEvent(const Json& data) { writer_->SendEvent(DumpJson(data)); }
  // {"prompt_tokens", "completion_tokens", "total_tokens"} over every prompt so far.
  Json Usage() const;

  ServingContext& context_;
  std::shared_ptr<ResponseWriter> writer_;
  const std::string response_id_;
  const int64_t created_;  // unix seconds
  const GenerationRequest request_;
  const std::vector<PromptInputs> prompts_;

 private:
  struct PromptProgress {
    std::shared_ptr<RequestOutputStream> stream;
    RequestOutput merged;  // every delta so far, concatenated (a stream's: their states only)
    bool has_output = false;
    bool ended = false;
    std::chrono::steady_clock::time_point last_token_at;
    int64_t num_generated = 0;
    std::vector<int64_t> num_generated_by_sequence;  // [n]
    // use_beam_search only: the search, and its current step's requests, one per live beam.
    std::unique_ptr<BeamSearch> beams;
    int num_beam_steps = 0;
    std::vector<std::shared_ptr<RequestOutputStream>> step_streams;  // null once read
    std::vector<std::optional<RequestOutput>> step_outputs;
  };

  std::string EngineRequestId(size_t prompt_index) const;
  // Called by the engine thread when a stream has news: drains the job on the strand.
  std::function<void()> Listener();
  void Drain();
  // Beam search: starts prompt `prompt_index`'s search; submits its next step; reads its step's
  // outputs and, once they have all ended, advances it (and ends the prompt when it is done).
  void StartBeamSearch(size_t prompt_index);
  void SubmitBeamStep(size_t prompt_index);
  void DrainBeamStep(size_t prompt_index);
  // The prompt's output from its finished search: the best beams, as vLLM's server returns them.
  RequestOutput BeamSearchOutputOf(size_t prompt_index) const;
  std::string BeamRequestId(size_t prompt_index, size_t beam) const;
  void AbortBeamSteps();
  void Account(PromptProgress& progress, const RequestOutput& delta);
  void AbortAll();
  // Ends the job at once (graceful shutdown's deadline): aborts its engine requests and answers
  // with `error`. On the strand.
  void Cancel(const ApiError& error);
  // The job's last act: it leaves the active requests and stops keeping itself alive.
  void Finish();

  std::chrono::steady_clock::time_point arrived_at_;
  std::vector<PromptProgress> progress_;
  bool failed_ = false;
  bool beams_aborted_ = false;           // beam searches stop at the end of their current step
  uint64_t active_handle_ = 0;           // in context_.active_requests
  std::shared_ptr<GenerationJob> self_;  // held while engine requests run
};

// Appends a delta output to the whole output so far; without `with_contents`, only its state
// (finish and stop reasons, cumulative logprobs, counts), not its text, token ids or logprobs.
void MergeDelta(const RequestOutput& delta, RequestOutput* merged, bool with_contents);

}  // namespace vllm::server
