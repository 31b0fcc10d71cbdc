#include "server/openai/completions/prompt_embeds.h"

#include <algorithm>
#include <string>

#include "engine/prompt_embeds_request.h"
#include "tokenizer/hf/base64.h"

namespace vllm::server {

std::optional<ApiError> ParsePromptEmbeds(const ServingContext& context, const Json& body,
                                          const GenerationRequest& request,
                                          std::vector<PromptInputs>* inputs) {
  auto field = body.find("prompt_embeds");
  if (field == body.end() || field->is_null()) return std::nullopt;
  if (!context.engine.enable_prompt_embeds()) {
    return ApiError::BadRequest(kPromptEmbedsNotEnabled, "prompt_embeds");
  }
  std::vector<std::string> encoded;
  if (field->is_string()) {
    encoded.push_back(field->get<std::string>());
  } else if (field->is_array() && std::all_of(field->begin(), field->end(),
                                              [](const Json& item) { return item.is_string(); })) {
    for (const Json& item : *field) encoded.push_back(item.get<std::string>());
  } else {
    return ApiError::BadRequest(
        "prompt_embeds: Input should be a base64 string or a list of base64 strings",
        "prompt_embeds");
  }
  if (request.use_beam_search) {
    return ApiError::BadRequest("use_beam_search is not supported with prompt_embeds",
                                "prompt_embeds");
  }
  for (const std::string& text : encoded) {
    std::optional<std::string> bytes = hf::DecodeBase64(text);
    if (!bytes) return ApiError::BadRequest("prompt_embeds: invalid base64", "prompt_embeds");
    auto embeds = LoadPromptEmbeds(*bytes);
    if (!embeds) return ApiError::BadRequest(embeds.error(), "prompt_embeds");
    PromptInputs& input = inputs->emplace_back();
    input.params = request.checked_params;
    // What the engine runs on: the last truncate_prompt_tokens rows, one placeholder id each
    // (for usage, max_tokens and the context-length check).
    int64_t num_tokens = (*embeds)->num_tokens;
    if (const auto keep = request.params.truncate_prompt_tokens; keep && num_tokens > *keep) {
      num_tokens = *keep;
    }
    if (num_tokens == 0) {
      return ApiError::BadRequest("The decoder prompt cannot be empty", "prompt_embeds");
    }
    input.token_ids.assign(num_tokens, 0);
    input.embeds = std::move(*embeds);
    if (auto error =
            ResolveMaxTokens(request, num_tokens, context.engine.max_model_len(), &input.params)) {
      return error;
    }
  }
  return std::nullopt;
}

}  // namespace vllm::server
