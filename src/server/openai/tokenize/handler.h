// POST /tokenize (vLLM's extension): a prompt, or a chat rendered as /v1/chat/completions
// renders it, to token ids.
#pragma once

#include "server/http_session.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"

namespace vllm::server {

// Runs on a request worker. {"prompt"} (special tokens added by default), or vLLM's chat form
// {"messages", ...} rendered as /v1/chat/completions renders it (add_generation_prompt,
// continue_final_message, tools, chat_template_kwargs; special tokens not added by default);
// add_special_tokens and return_token_strs as vLLM reads them. Answers {count, max_model_len,
// tokens, token_strs}.
void HandleTokenize(ServingContext& context, const RequestMeta& meta,
                    const std::shared_ptr<ResponseWriter>& writer, const Json& body);

}  // namespace vllm::server
