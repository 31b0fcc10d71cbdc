#include "server/openai/tokenize/handler.h"

#include "server/openai/chat/protocol.h"
#include "server/openai/generation_request.h"
#include "server/openai/without_tokenizer.h"
#include "server/worker_reply.h"
#include "tokenizer/tokenizer.h"

namespace vllm::server {

void HandleTokenize(ServingContext& context, const RequestMeta& /*meta*/,
                    const std::shared_ptr<ResponseWriter>& writer, const Json& body) {
  if (!context.engine.has_tokenizer()) {
    return PostError(writer, ApiError::BadRequest(kTokenizerNotAvailable));
  }
  const Tokenizer& tokenizer = context.engine.tokenizer();
  const bool chat = body.contains("messages");
  std::optional<std::string> prompt;
  bool add_special_tokens = !chat;
  bool return_token_strs = false;
  std::optional<ApiError> error;
  if (chat) {
    ChatPrompt rendered;
    error = RenderChatPrompt(tokenizer, context.chat_template, context.limits, body, &rendered);
    if (!error) prompt = std::move(rendered.text);
  } else {
    error = ReadField(body, "prompt", GetString, &prompt);
    if (!error && !prompt) error = ApiError::BadRequest("prompt: Field required", "prompt");
  }
  if (!error) error = ReadField(body, "add_special_tokens", GetBool, &add_special_tokens);
  if (!error) error = ReadField(body, "return_token_strs", GetBool, &return_token_strs);
  if (!error && prompt->size() > context.limits.max_prompt_bytes) {
    error = PromptTooLarge(prompt->size(), context.limits.max_prompt_bytes,
                           chat ? "messages" : "prompt");
  }
  if (error) return PostError(writer, *error);
  const std::vector<int32_t> ids = tokenizer.Encode(*prompt, add_special_tokens);
  Json token_strs = nullptr;
  if (return_token_strs) {
    token_strs = Json::array();
    for (int32_t id : ids) token_strs.push_back(std::string(tokenizer.TokenToPiece(id)));
  }
  PostJson(writer, {{"count", ids.size()},
                    {"max_model_len", context.engine.max_model_len()},
                    {"tokens", ids},
                    {"token_strs", std::move(token_strs)}});
}

}  // namespace vllm::server
