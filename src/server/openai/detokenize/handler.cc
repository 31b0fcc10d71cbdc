#include "server/openai/detokenize/handler.h"

#include "server/openai/without_tokenizer.h"
#include "server/worker_reply.h"
#include "tokenizer/tokenizer.h"

namespace vllm::server {

void HandleDetokenize(ServingContext& context, const RequestMeta& /*meta*/,
                      const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  if (!context.engine.has_tokenizer()) {
    return PostError(writer, ApiError::BadRequest(kTokenizerNotAvailable));
  }
  const Tokenizer& tokenizer = context.engine.tokenizer();
  std::optional<std::vector<int32_t>> tokens;
  if (auto error = ReadField(body, "tokens", GetIntList, &tokens)) return PostError(writer, *error);
  if (!tokens) return PostError(writer, ApiError::BadRequest("tokens: Field required", "tokens"));
  for (int32_t id : *tokens) {
    if (id < 0 || id >= tokenizer.vocab_size()) {
      return PostError(
          writer, ApiError::BadRequest("Token id " + std::to_string(id) + " is out of vocabulary",
                                       "tokens"));
    }
  }
  PostJson(writer, {{"prompt", tokenizer.Decode(*tokens, false)}});
}

}  // namespace vllm::server
