#include "server/openai/completions/handler.h"

#include "server/openai/completions/prompt_embeds.h"
#include "server/openai/completions/protocol.h"
#include "server/openai/generation_job.h"
#include "server/openai/logprobs_format.h"
#include "server/openai/prompt_inputs.h"
#include "server/openai/structured_outputs_request.h"
#include "server/openai/without_tokenizer.h"
#include "server/worker_reply.h"

namespace vllm::server {
namespace {

class CompletionJob : public GenerationJob {
 public:
  using GenerationJob::GenerationJob;

 private:
  // Choice index of sequence `sequence` of prompt `prompt_index`.
  size_t ChoiceIndex(size_t prompt_index, int sequence) const {
    return prompt_index * request_.params.n + sequence;
  }

  Json Chunk(Json choices) const {
    return {{"id", response_id_},
            {"object", "text_completion"},
            {"created", created_},
            {"model", context_.ResponseModelName(request_.options.lora_request)},
            {"choices", std::move(choices)}};
  }

  void OnDelta(size_t prompt_index, const RequestOutput& delta) override {
    writer_->StartEventStream();
    const int num_logprobs = request_.params.logprobs.value_or(0);
    for (const CompletionOutput& part : delta.outputs) {
      const size_t index = ChoiceIndex(prompt_index, part.index);
      if (text_offsets_.size() <= index) text_offsets_.resize(index + 1, -1);
      const bool first = text_offsets_[index] < 0;
      if (part.text.empty() && part.token_ids.empty() && part.finish_reason.empty()) continue;
      std::string text = part.text;
      if (first) {
        text_offsets_[index] = 0;
        if (request_.echo && !request_.return_token_ids) text = prompts_[prompt_index].text + text;
      }
      Json logprobs = nullptr;
      if (request_.params.logprobs && part.logprobs) {
        std::vector<std::optional<PositionLogprobs>> positions(part.logprobs->begin(),
                                                               part.logprobs->end());
        logprobs = CompletionLogprobs(context_.engine.tokenizer(), part.token_ids, positions,
                                      num_logprobs, text_offsets_[index], request_.tokens_as_ids);
      }
      text_offsets_[index] += CountCharacters(text);
      Json choice = {
          {"index", index},
          {"text", std::move(text)},
          {"logprobs", std::move(logprobs)},
          {"finish_reason", part.finish_reason.empty() ? Json(nullptr) : Json(part.finish_reason)},
          {"stop_reason", StopReasonJson(part)}};
      if (request_.return_token_ids) {
        // As vLLM: the prompt's ids with each choice's first chunk, each chunk's new ids.
        choice["prompt_token_ids"] = first ? Json(prompts_[prompt_index].token_ids) : Json(nullptr);
        choice["token_ids"] = part.token_ids;
      }
      Json chunk = Chunk(Json::array({std::move(choice)}));
      if (request_.include_usage && request_.continuous_usage_stats) chunk["usage"] = Usage();
      SendEvent(chunk);
    }
  }

  void FinishStream() override {
    writer_->StartEventStream();
    EndStream(Chunk(Json::array()));
  }

  Json BuildResponse(const std::vector<RequestOutput>& outputs, Json usage) const override {
    Json choices = Json::array();
    const int num_logprobs = request_.params.logprobs.value_or(0);
    for (size_t i = 0; i < outputs.size(); ++i) {
      const RequestOutput& output = outputs[i];
      for (const CompletionOutput& completion : output.outputs) {
        std::string text = completion.text;
        std::vector<int32_t> token_ids = completion.token_ids;
        std::vector<std::optional<PositionLogprobs>> positions;
        if (request_.echo) {
          // vLLM echoes no prompt text when token ids are returned.
          if (!request_.return_token_ids) text = prompts_[i].text + text;
          token_ids.insert(token_ids.begin(), output.prompt_token_ids.begin(),
                           output.prompt_token_ids.end());
          if (output.prompt_logprobs) positions = *output.prompt_logprobs;
        }
        if (completion.logprobs) {
          positions.insert(positions.end(), completion.logprobs->begin(),
                           completion.logprobs->end());
        }
        Json logprobs = nullptr;
        if (request_.params.logprobs) {
          logprobs = CompletionLogprobs(context_.engine.tokenizer(), token_ids, positions,
                                        num_logprobs, 0, request_.tokens_as_ids);
        }
        choices.push_back(
            {{"index", ChoiceIndex(i, completion.index)},
             {"text", std::move(text)},
             {"logprobs", std::move(logprobs)},
             {"finish_reason", completion.finish_reason},
             {"stop_reason", StopReasonJson(completion)},
             {"prompt_logprobs", output.prompt_logprobs && request_.params.prompt_logprobs
                                     ? PromptLogprobs(*output.prompt_logprobs)
                                     : Json(nullptr)}});
        if (request_.return_token_ids) {
          choices.back()["prompt_token_ids"] = output.prompt_token_ids;
          choices.back()["token_ids"] = completion.token_ids;
        }
      }
    }
    Json response = Chunk(std::move(choices));
    response["usage"] = std::move(usage);
    return response;
  }

  std::vector<int64_t> text_offsets_;  // per choice: characters streamed so far (-1: none yet)
};

}  // namespace

void HandleCompletions(ServingContext& context, const RequestMeta& meta,
                       const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  auto fail = [&](const ApiError& error) { PostError(writer, error); };
  GenerationRequest request;
  request.params = context.engine.default_sampling_params();
  request.max_logprobs = context.limits.max_logprobs;
  // The server's structured-output settings edit the params before their check.
  auto route_edits = [&context](GenerationRequest* parsed) -> std::optional<ApiError> {
    ApplyStructuredOutputsConfig(context.structured_outputs_config, &parsed->params);
    return std::nullopt;
  };
  if (auto error = ParseGenerationRequest(body, Endpoint::kCompletions, &request, route_edits)) {
    return fail(*error);
  }
  if (auto error = CheckModelAndTokenIds(context, &request)) return fail(*error);
  if (!context.engine.has_tokenizer()) {
    if (auto error = CheckCompletionWithoutTokenizer(request)) return fail(*error);
  }
  if (request.use_beam_search) request.stream = false;  // as vLLM: beam search answers at once
  // prompt_embeds first, as vLLM orders them.
  std::vector<PromptInputs> inputs;
  if (auto error = ParsePromptEmbeds(context, body, request, &inputs)) return fail(*error);
  std::vector<CompletionPrompt> prompts;
  if (auto error = ParseCompletionPrompts(body, &prompts, !inputs.empty())) return fail(*error);
  if (auto error = CheckSequenceCount(context, inputs.size() + prompts.size(), request.params.n)) {
    return fail(*error);
  }
  for (const CompletionPrompt& prompt : prompts) {
    if (auto error = PreparePrompt(context, request, prompt, &inputs.emplace_back())) {
      return fail(*error);
    }
  }
  std::string id = MakeResponseId(meta, request, "cmpl");
  auto job = std::make_shared<CompletionJob>(context, writer, std::move(id), std::move(request),
                                             std::move(inputs));
  writer->Post([job] { job->Start(); });
}

}  // namespace vllm::server
