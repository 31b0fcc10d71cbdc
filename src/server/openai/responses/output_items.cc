#include "server/openai/responses/output_items.h"

#include <random>

namespace vllm::server {
namespace {

// Where an item's text lives: a message's output_text part, a reasoning item's reasoning_text.
const char* PartTypeOf(const Json& item) {
  return item["type"] == "message" ? "output_text" : "reasoning_text";
}

}  // namespace

std::string MakeItemId(const char* prefix, int num_digits) {
  static thread_local std::mt19937_64 generator{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = std::string(prefix) + "_";
  for (int i = 0; i < num_digits; ++i) id += kHex[generator() & 15];
  return id;
}

Json ResponseOutputBuilder::ItemEvent(const char* type, size_t output_index) const {
  Json event = {
      {"type", type}, {"item_id", output_[output_index]["id"]}, {"output_index", output_index}};
  if (output_[output_index]["type"] != "function_call") event["content_index"] = 0;
  return event;
}

void ResponseOutputBuilder::OpenItem(ItemKind kind, Json item, std::vector<Json>* events) {
  Finish(events);
  open_kind_ = kind;
  output_.push_back(std::move(item));
  const size_t index = output_.size() - 1;
  events->push_back(
      {{"type", "response.output_item.added"}, {"output_index", index}, {"item", output_.back()}});
  if (kind == ItemKind::kFunctionCall) return;
  Json part = {{"type", PartTypeOf(output_.back())}, {"text", ""}};
  if (kind == ItemKind::kMessage) {
    part["annotations"] = Json::array();
    part["logprobs"] = Json::array();
  }
  output_.back()["content"].push_back(part);
  Json event = ItemEvent("response.content_part.added", index);
  event["part"] = std::move(part);
  events->push_back(std::move(event));
}

void ResponseOutputBuilder::AddText(ItemKind kind, const std::string& text, const Json& logprobs,
                                    std::vector<Json>* events) {
  if (text.empty()) return;
  if (open_kind_ != kind) {
    Json item = kind == ItemKind::kMessage
                    ? Json{{"id", MakeItemId("msg")},
                           {"type", "message"},
                           {"role", "assistant"},
                           {"status", "in_progress"},
                           {"content", Json::array()}}
                    : Json{{"id", MakeItemId("rs")},       {"type", "reasoning"},
                           {"summary", Json::array()},     {"content", Json::array()},
                           {"encrypted_content", nullptr}, {"status", "in_progress"}};
    OpenItem(kind, std::move(item), events);
  }
  const size_t index = output_.size() - 1;
  Json& part = output_[index]["content"][0];
  part["text"] = part["text"].get<std::string>() + text;
  Json event = ItemEvent(
      kind == ItemKind::kMessage ? "response.output_text.delta" : "response.reasoning_text.delta",
      index);
  event["delta"] = text;
  if (kind == ItemKind::kMessage) {
    const Json token_logprobs = logprobs.is_array() ? logprobs : Json::array();
    for (const Json& entry : token_logprobs) part["logprobs"].push_back(entry);
    event["logprobs"] = token_logprobs;
  }
  events->push_back(std::move(event));
}

void ResponseOutputBuilder::AddToolCall(const Json& call, std::vector<Json>* events) {
  const int64_t call_index = call.value("index", static_cast<int64_t>(call_items_.size()));
  const Json function = call.value("function", Json::object());
  if (call.contains("id")) {  // a call begins
    OpenItem(ItemKind::kFunctionCall,
             {{"id", MakeItemId("fc")},
              {"type", "function_call"},
              {"status", "in_progress"},
              {"arguments", ""},
              {"call_id", MakeItemId("call", 24)},
              {"name", function.value("name", "")}},
             events);
    call_items_[call_index] = output_.size() - 1;
  }
  auto item = call_items_.find(call_index);
  const std::string arguments = function.value("arguments", "");
  if (item == call_items_.end() || arguments.empty()) return;
  Json& target = output_[item->second];
  target["arguments"] = target["arguments"].get<std::string>() + arguments;
  Json event = ItemEvent("response.function_call_arguments.delta", item->second);
  event["delta"] = arguments;
  events->push_back(std::move(event));
}

void ResponseOutputBuilder::Add(const Json& fields, const Json& logprobs,
                                std::vector<Json>* events) {
  if (auto it = fields.find("reasoning_content"); it != fields.end() && it->is_string()) {
    AddText(ItemKind::kReasoning, it->get<std::string>(), nullptr, events);
  }
  if (auto it = fields.find("content"); it != fields.end() && it->is_string()) {
    AddText(ItemKind::kMessage, it->get<std::string>(), logprobs, events);
  }
  if (auto it = fields.find("tool_calls"); it != fields.end() && it->is_array()) {
    for (const Json& call : *it) AddToolCall(call, events);
  }
}

void ResponseOutputBuilder::Finish(std::vector<Json>* events) {
  if (open_kind_ == ItemKind::kNone) return;
  const size_t index = output_.size() - 1;
  Json& item = output_[index];
  if (open_kind_ == ItemKind::kFunctionCall) {
    Json event = ItemEvent("response.function_call_arguments.done", index);
    event["name"] = item["name"];
    event["arguments"] = item["arguments"];
    events->push_back(std::move(event));
  } else {
    const Json& part = item["content"][0];
    const bool is_message = open_kind_ == ItemKind::kMessage;
    Json text_done =
        ItemEvent(is_message ? "response.output_text.done" : "response.reasoning_text.done", index);
    text_done["text"] = part["text"];
    if (is_message) text_done["logprobs"] = part["logprobs"];
    events->push_back(std::move(text_done));
    Json part_done = ItemEvent("response.content_part.done", index);
    part_done["part"] = part;
    events->push_back(std::move(part_done));
  }
  item["status"] = "completed";
  events->push_back(
      {{"type", "response.output_item.done"}, {"output_index", index}, {"item", item}});
  open_kind_ = ItemKind::kNone;
}

void SetResponseStatus(const std::string& finish_reason, Json* response) {
  if (finish_reason == "length") {
    (*response)["status"] = "incomplete";
    (*response)["incomplete_details"] = {{"reason", "max_output_tokens"}};
  } else if (finish_reason == "abort") {
    (*response)["status"] = "cancelled";
  } else {
    (*response)["status"] = "completed";
  }
}

Json ResponseUsage(int64_t num_input_tokens, int64_t num_cached_tokens, int64_t num_output_tokens) {
  return {{"input_tokens", num_input_tokens},
          {"input_tokens_details", {{"cached_tokens", num_cached_tokens}}},
          {"output_tokens", num_output_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", num_input_tokens + num_output_tokens}};
}

Json ResponseObject(const std::string& id, int64_t created_at, const std::string& model,
                    const Json& echoed, const std::string& status, Json output, Json usage) {
  Json response = {{"id", id},
                   {"object", "response"},
                   {"created_at", created_at},
                   {"status", status},
                   {"error", nullptr},
                   {"incomplete_details", nullptr},
                   {"model", model},
                   {"output", std::move(output)},
                   {"usage", std::move(usage)}};
  for (const auto& [key, value] : echoed.items()) response[key] = value;
  return response;
}

}  // namespace vllm::server
