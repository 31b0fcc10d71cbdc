#include "engine/skip_tokenizer_init.h"

namespace vllm {

Status CheckParamsWithoutTokenizer(const SamplingParams& params) {
  if (params.structured_outputs) {
    return Error{
        "Structured outputs requires a tokenizer so it can't be used with "
        "'skip_tokenizer_init'"};
  }
  if (!params.stop.empty()) {
    return Error{
        "stop strings need a tokenizer to detokenize, so they can't be used with "
        "'skip_tokenizer_init'; use stop_token_ids"};
  }
  if (!params.bad_words.empty()) {
    return Error{"bad_words need a tokenizer, so they can't be used with 'skip_tokenizer_init'"};
  }
  return Status::Ok();
}

Status CheckRequestWithoutTokenizer(const std::variant<std::string, std::vector<int32_t>>& prompt,
                                    const SamplingParams& params) {
  if (std::holds_alternative<std::string>(prompt)) return Error{kTextPromptWithoutTokenizer};
  return CheckParamsWithoutTokenizer(params);
}

}  // namespace vllm
