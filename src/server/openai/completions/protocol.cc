#include "server/openai/completions/protocol.h"

#include <limits>

namespace vllm::server {
namespace {

bool ReadTokenIds(const Json& list, std::vector<int32_t>* ids) {
  for (const Json& item : list) {
    if (!item.is_number_integer()) return false;
    const int64_t id = item.get<int64_t>();
    if (item.is_number_unsigned() && item.get<uint64_t>() > INT32_MAX) return false;
    if (id < std::numeric_limits<int32_t>::min() || id > std::numeric_limits<int32_t>::max()) {
      return false;
    }
    ids->push_back(static_cast<int32_t>(id));
  }
  return true;
}

}  // namespace

std::optional<ApiError> ParseCompletionPrompts(const Json& body,
                                               std::vector<CompletionPrompt>* prompts,
                                               bool has_prompt_embeds) {
  const auto invalid = [] {
    return ApiError::BadRequest(
        "prompt: Input should be a valid string, list of strings, list of integers or list of "
        "lists of integers",
        "prompt");
  };
  auto it = body.find("prompt");
  if (has_prompt_embeds &&
      (it == body.end() || it->is_null() || (it->is_string() && it->get<std::string>().empty()))) {
    return std::nullopt;
  }
  if (it == body.end() || it->is_null()) {
    return ApiError::BadRequest("Either prompt or prompt_embeds must be provided and non-empty.",
                                "prompt");
  }
  const Json& prompt = *it;
  if (prompt.is_string()) {
    prompts->push_back(prompt.get<std::string>());
    return std::nullopt;
  }
  if (!prompt.is_array() || prompt.empty()) {
    return prompt.is_array()
               ? ApiError::BadRequest(
                     "Either prompt or prompt_embeds must be provided and non-empty.", "prompt")
               : invalid();
  }
  if (prompt.front().is_string()) {
    for (const Json& item : prompt) {
      if (!item.is_string()) return invalid();
      prompts->push_back(item.get<std::string>());
    }
    return std::nullopt;
  }
  if (prompt.front().is_number()) {
    std::vector<int32_t> ids;
    if (!ReadTokenIds(prompt, &ids)) return invalid();
    prompts->push_back(std::move(ids));
    return std::nullopt;
  }
  for (const Json& item : prompt) {
    std::vector<int32_t> ids;
    if (!item.is_array() || !ReadTokenIds(item, &ids)) return invalid();
    prompts->push_back(std::move(ids));
  }
  return std::nullopt;
}

}  // namespace vllm::server
