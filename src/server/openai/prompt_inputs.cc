#include "server/openai/prompt_inputs.h"

#include <algorithm>
#include <random>

#include "engine/skip_tokenizer_init.h"
#include "tokenizer/tokenizer.h"

namespace vllm::server {

std::optional<ApiError> PreparePrompt(const ServingContext& context,
                                      const GenerationRequest& request,
                                      const std::variant<std::string, std::vector<int32_t>>& prompt,
                                      PromptInputs* inputs) {
  const bool has_tokenizer = context.engine.has_tokenizer();
  if (const auto* text = std::get_if<std::string>(&prompt)) {
    if (!has_tokenizer) return ApiError::BadRequest(kTextPromptWithoutTokenizer, "prompt");
    if (text->size() > context.limits.max_prompt_bytes) {
      return PromptTooLarge(text->size(), context.limits.max_prompt_bytes, "prompt");
    }
    inputs->text = *text;
    inputs->token_ids = context.engine.tokenizer().Encode(*text, request.add_special_tokens);
  } else {
    inputs->token_ids = std::get<std::vector<int32_t>>(prompt);
    const int64_t vocab_size = context.engine.prompt_vocab_size();
    for (int32_t id : inputs->token_ids) {
      if (id < 0 || id >= vocab_size) {
        return ApiError::BadRequest("Token id " + std::to_string(id) + " is out of vocabulary",
                                    "prompt");
      }
    }
    // Without a tokenizer the prompt has no text, as vLLM's prompt is None.
    if (has_tokenizer) inputs->text = context.engine.tokenizer().Decode(inputs->token_ids, false);
  }
  inputs->params = request.checked_params;
  if (const auto keep = request.params.truncate_prompt_tokens;
      keep && static_cast<int64_t>(inputs->token_ids.size()) > *keep) {
    inputs->token_ids.erase(inputs->token_ids.begin(), inputs->token_ids.end() - *keep);
  }
  if (inputs->token_ids.empty()) {
    return ApiError::BadRequest("The decoder prompt cannot be empty", "prompt");
  }
  return ResolveMaxTokens(request, static_cast<int64_t>(inputs->token_ids.size()),
                          context.engine.max_model_len(), &inputs->params);
}

std::optional<ApiError> CheckModelAndTokenIds(const ServingContext& context,
                                              GenerationRequest* request) {
  if (!context.ResolveModel(request->model, &request->options.lora_request)) {
    return ApiError::NotFound("The model `" + request->model + "` does not exist.");
  }
  return CheckTokenIds(request->params, context.engine.prompt_vocab_size());
}

std::optional<ApiError> CheckSequenceCount(const ServingContext& context, size_t num_prompts,
                                           int n) {
  const int64_t num_sequences = static_cast<int64_t>(num_prompts) * n;
  if (num_sequences <= context.limits.max_sequences) return std::nullopt;
  return ApiError::BadRequest(
      "The request asks for " + std::to_string(num_sequences) + " sequences (" +
          std::to_string(num_prompts) + " prompt(s) x n=" + std::to_string(n) +
          "); this server allows at most " + std::to_string(context.limits.max_sequences) +
          " per request (--max-sequences-per-request).",
      num_prompts > 1 ? "prompt" : "n");
}

std::string MakeResponseId(const RequestMeta& meta, const GenerationRequest& request,
                           const char* prefix) {
  if (meta.request_id_header) return std::string(prefix) + "-" + *meta.request_id_header;
  if (request.request_id) return std::string(prefix) + "-" + *request.request_id;
  static thread_local std::mt19937_64 generator{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = std::string(prefix) + "-";
  for (int i = 0; i < 32; ++i) id += kHex[generator() & 15];
  return id;
}

Json StopReasonJson(const CompletionOutput& output) {
  if (const auto* text = std::get_if<std::string>(&output.stop_reason)) return *text;
  if (const auto* id = std::get_if<int32_t>(&output.stop_reason)) return *id;
  return nullptr;
}

}  // namespace vllm::server
