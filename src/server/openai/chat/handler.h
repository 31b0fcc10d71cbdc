// POST /v1/chat/completions.
#pragma once

#include <optional>
#include <vector>

#include "server/http_session.h"
#include "server/openai/chat/chat_output.h"
#include "server/openai/chat/protocol.h"
#include "server/openai/generation_job.h"
#include "server/openai/json.h"
#include "server/openai/prompt_inputs.h"
#include "server/serving_context.h"

namespace vllm::server {

// A chat request made ready to run: its parameters, how its reply is parsed (tools, reasoning),
// its rendered prompt and the prompt's engine inputs.
struct PreparedChat {
  GenerationRequest request;
  ChatOutputConfig output_config;
  ChatPrompt prompt;
  std::vector<PromptInputs> inputs;  // one
};

// Everything the chat route does before it runs a request: the body parsed and checked, the
// tools and structured outputs applied, the template rendered and the prompt tokenized. Also
// what /v1/responses does with the chat body it makes. On a request worker.
std::optional<ApiError> PrepareChatRequest(ServingContext& context, const Json& body,
                                           PreparedChat* chat);

// Runs on a request worker; answers (or starts the job) on the connection's strand.
void HandleChatCompletions(ServingContext& context, const RequestMeta& meta,
                           const std::shared_ptr<ResponseWriter>& writer, const Json& body);

}  // namespace vllm::server
