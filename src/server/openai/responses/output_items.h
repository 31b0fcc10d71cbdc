// A response's `output` items, and the stream events that build them: a reasoning item
// (reasoning_text), an assistant message (one output_text part) and function_call items, made
// from the assistant's fields as the chat route's parsers give them — a whole reply's
// (ParseAssistantMessage) or each streamed delta's (ChatDeltaParser) — so a stream and a whole
// response hold the same items. Also the response object around them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "server/openai/json.h"

namespace vllm::server {

class ResponseOutputBuilder {
 public:
  // Applies one delta's fields ("reasoning_content", "content", "tool_calls" with chat's
  // [{index, id?, function: {name?, arguments}}]); `logprobs` are the content's tokens' (an
  // array, or null). Appends the events it makes to `*events`, without sequence numbers.
  void Add(const Json& fields, const Json& logprobs, std::vector<Json>* events);
  // Closes the item still open; appends its done events.
  void Finish(std::vector<Json>* events);
  const Json& output() const { return output_; }

 private:
  enum class ItemKind { kNone, kReasoning, kMessage, kFunctionCall };

  void OpenItem(ItemKind kind, Json item, std::vector<Json>* events);
  void AddText(ItemKind kind, const std::string& text, const Json& logprobs,
               std::vector<Json>* events);
  void AddToolCall(const Json& call, std::vector<Json>* events);
  // An event about the open item: its type, item_id and output_index (and content_index for
  // those inside its content part).
  Json ItemEvent(const char* type, size_t output_index) const;

  Json output_ = Json::array();
  ItemKind open_kind_ = ItemKind::kNone;
  std::map<int64_t, size_t> call_items_;  // a tool call's index in the deltas → its output index
};

// "<prefix>_" and `num_digits` random hex digits: resp_, msg_, fc_, call_ and rs_ ids.
std::string MakeItemId(const char* prefix, int num_digits = 32);

// What a finished output's finish_reason makes of the response: status and incomplete_details.
void SetResponseStatus(const std::string& finish_reason, Json* response);

// The usage object: {input_tokens, input_tokens_details, output_tokens, output_tokens_details,
// total_tokens}.
Json ResponseUsage(int64_t num_input_tokens, int64_t num_cached_tokens, int64_t num_output_tokens);

// The response object: `echoed` holds the request's fields it repeats (ResponsesRequest::echoed).
Json ResponseObject(const std::string& id, int64_t created_at, const std::string& model,
                    const Json& echoed, const std::string& status, Json output, Json usage);

}  // namespace vllm::server
