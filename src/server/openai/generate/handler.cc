#include "server/openai/generate/handler.h"

#include "server/openai/generation_job.h"
#include "server/worker_reply.h"

namespace vllm::server {
namespace {

class GenerateJob : public GenerationJob {
 public:
  using GenerationJob::GenerationJob;

 private:
  // {"text": [prompt + output]} over `texts`, one per sequence.
  Json TextsJson(const std::vector<std::string>& texts) const {
    Json text = Json::array();
    for (const std::string& output : texts) text.push_back(prompts_.front().text + output);
    return {{"text", std::move(text)}};
  }

  void OnDelta(size_t, const RequestOutput& delta) override {
    if (!writer_->started()) writer_->StartStream("application/x-ndjson");
    for (const CompletionOutput& part : delta.outputs) {
      if (texts_.size() <= static_cast<size_t>(part.index)) texts_.resize(part.index + 1);
      texts_[part.index] += part.text;
    }
    writer_->SendChunk(DumpJson(TextsJson(texts_)) + "\n");
  }

  void FinishStream() override {
    if (!writer_->started()) writer_->StartStream("application/x-ndjson");
    writer_->EndEventStream();
  }

  Json BuildResponse(const std::vector<RequestOutput>& outputs, Json) const override {
    std::vector<std::string> texts;
    for (const CompletionOutput& output : outputs.front().outputs) texts.push_back(output.text);
    return TextsJson(texts);
  }

  std::vector<std::string> texts_;  // streaming: each sequence's text so far
};

}  // namespace

void HandleGenerate(ServingContext& context, const RequestMeta& meta,
                    const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  auto fail = [&](const ApiError& error) { PostError(writer, error); };
  auto prompt = body.find("prompt");
  if (prompt == body.end() || !prompt->is_string()) {
    return fail(ApiError::BadRequest("prompt: Field required (a string)", "prompt"));
  }
  GenerationRequest request;  // SamplingParams' defaults, as vLLM's SamplingParams(**body)
  request.max_logprobs = context.limits.max_logprobs;
  if (auto error = ParseGenerationRequest(body, Endpoint::kCompletions, &request)) {
    return fail(*error);
  }
  if (auto error = CheckModelAndTokenIds(context, &request)) return fail(*error);
  if (auto error = CheckSequenceCount(context, 1, request.params.n)) return fail(*error);
  std::vector<PromptInputs> inputs(1);
  if (auto error = PreparePrompt(context, request, prompt->get<std::string>(), &inputs[0])) {
    return fail(*error);
  }
  std::string id = MakeResponseId(meta, request, "generate");
  auto job = std::make_shared<GenerateJob>(context, writer, std::move(id), std::move(request),
                                           std::move(inputs));
  writer->Post([job] { job->Start(); });
}

}  // namespace vllm::server
