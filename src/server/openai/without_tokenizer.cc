#include "server/openai/without_tokenizer.h"

#include "engine/skip_tokenizer_init.h"

namespace vllm::server {
namespace {

ApiError NeedsTokenizer(const std::string& field, const std::string& why,
                        const std::string& hint = "") {
  return ApiError::BadRequest(field + " needs a tokenizer (" + why +
                                  "), so it can't be used with 'skip_tokenizer_init'" + hint,
                              field);
}

}  // namespace

std::optional<ApiError> CheckCompletionWithoutTokenizer(const GenerationRequest& request) {
  const SamplingParams& params = request.params;
  if (Status status = CheckParamsWithoutTokenizer(params); !status.ok()) {
    const char* param = params.structured_outputs ? "structured_outputs"
                        : !params.stop.empty()    ? "stop"
                                                  : "bad_words";
    return ApiError::BadRequest(status.message(), param);
  }
  if (request.echo) {
    return NeedsTokenizer("echo", "it returns the prompt's text",
                          "; return_token_ids gives the prompt's token ids");
  }
  if (params.logprobs) return NeedsTokenizer("logprobs", "it names tokens by their text");
  if (params.prompt_logprobs) {
    return NeedsTokenizer("prompt_logprobs", "it names tokens by their text");
  }
  if (request.use_beam_search) {
    return NeedsTokenizer("use_beam_search", "beams are decoded to text");
  }
  return std::nullopt;
}

}  // namespace vllm::server
