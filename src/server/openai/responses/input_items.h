// A /v1/responses request's `input` (a string, or a list of items) as chat messages, the shape
// the chat template and the chat route's checks take: message items keep their role (developer
// becomes system, which templates know), their text parts joined; function_call items become an
// assistant message's tool_calls (consecutive calls share one message, as parallel calls do);
// function_call_output items become tool messages. Reasoning items are dropped, as vLLM drops
// earlier reasoning when it continues a conversation.
#pragma once

#include <optional>

#include "server/openai/api_error.h"
#include "server/openai/json.h"

namespace vllm::server {

// Appends the messages of `input` to `*messages` (a JSON array).
std::optional<ApiError> AppendInputMessages(const Json& input, Json* messages);

// Appends a response's `output` items as the assistant's messages, for a conversation that
// continues it (previous_response_id).
void AppendOutputMessages(const Json& output, Json* messages);

}  // namespace vllm::server
