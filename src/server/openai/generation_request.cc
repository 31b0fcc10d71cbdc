#include "server/openai/generation_request.h"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "server/openai/structured_outputs_request.h"

namespace vllm::server {

namespace {

ApiError NotSupported(const std::string& field, const std::string& what) {
  return ApiError::BadRequest(what + " is not supported by this server yet.", field);
}

// vLLM's request fields that this build does not implement: a request that sets one to anything
// but its no-op value gets a 400 naming it, never a silent 200.
std::optional<ApiError> CheckUnsupportedFields(const Json& body, Endpoint endpoint, int n) {
  for (const char* name : {"structural_tag", "logits_processors", "prompt_embeds",
                           "kv_transfer_params", "mm_processor_kwargs", "vllm_xargs"}) {
    if (IsPresent(body, name)) return NotSupported(name, std::string("`") + name + "`");
  }
  if (auto best_of = body.find("best_of"); best_of != body.end() && !best_of->is_null()) {
    if (!best_of->is_number_integer() || best_of->get<int64_t>() != n) {
      return ApiError::BadRequest("vLLM V1 does not yet support best_of.", "best_of");
    }
  }
  if (auto flag = body.find("return_token_ids");
      flag != body.end() && flag->is_boolean() && *flag) {
    return NotSupported("return_token_ids", "`return_token_ids`");
  }
  if (auto skip = body.find("spaces_between_special_tokens");
      skip != body.end() && skip->is_boolean() && !*skip) {
    auto skip_special = body.find("skip_special_tokens");
    if (skip_special != body.end() && skip_special->is_boolean() && !*skip_special) {
      return NotSupported("spaces_between_special_tokens",
                          "`spaces_between_special_tokens: false` with "
                          "`skip_special_tokens: false`");
    }
  }
  if (endpoint == Endpoint::kCompletions) {
    if (auto suffix = body.find("suffix"); suffix != body.end() && !suffix->is_null()) {
      return ApiError::BadRequest("suffix is not currently supported", "suffix");
    }
  }
  return std::nullopt;
}

}  // namespace

#define VLLM_READ(getter, name, out) \
  if (auto error = ReadField(body, name, getter, out); error) return error

std::optional<ApiError> ParseGenerationRequest(const Json& body, Endpoint endpoint,
                                               GenerationRequest* request) {
  request->endpoint = endpoint;
  SamplingParams& params = request->params;
  VLLM_READ(GetString, "model", &request->model);
  VLLM_READ(GetBool, "stream", &request->stream);
  if (auto options = GetObject(body, "stream_options"); !options.ok()) {
    return ApiError::BadRequest(options.error(), "stream_options");
  } else if (options->has_value()) {
    if (!request->stream) {
      return ApiError::BadRequest("Stream options can only be defined when `stream=True`.",
                                  "stream_options");
    }
    const Json& stream_options = **options;
    if (auto error = ReadField(stream_options, "include_usage", GetBool, &request->include_usage)) {
      return error;
    }
    if (auto error = ReadField(stream_options, "continuous_usage_stats", GetBool,
                               &request->continuous_usage_stats)) {
      return error;
    }
  }
  VLLM_READ(GetInt, "n", &params.n);
  if (params.n > kMaxN) {
    return ApiError::BadRequest(
        "n must be at most " + std::to_string(kMaxN) + ", got " + std::to_string(params.n) + ".",
        "n");
  }
  VLLM_READ(GetNumber, "temperature", &params.temperature);
  VLLM_READ(GetNumber, "top_p", &params.top_p);
  VLLM_READ(GetInt, "top_k", &params.top_k);
  VLLM_READ(GetNumber, "min_p", &params.min_p);
  VLLM_READ(GetNumber, "presence_penalty", &params.presence_penalty);
  VLLM_READ(GetNumber, "frequency_penalty", &params.frequency_penalty);
  VLLM_READ(GetNumber, "repetition_penalty", &params.repetition_penalty);
  VLLM_READ(GetInt, "seed", &params.seed);
  VLLM_READ(GetStringOrList, "stop", &params.stop);
  VLLM_READ(GetIntList, "stop_token_ids", &params.stop_token_ids);
  VLLM_READ(GetBool, "include_stop_str_in_output", &params.include_stop_str_in_output);
  VLLM_READ(GetBool, "ignore_eos", &params.ignore_eos);
  VLLM_READ(GetInt, "min_tokens", &params.min_tokens);
  VLLM_READ(GetBool, "skip_special_tokens", &params.skip_special_tokens);
  VLLM_READ(GetBool, "spaces_between_special_tokens", &params.spaces_between_special_tokens);
  std::optional<int64_t> truncate;
  VLLM_READ(GetInt, "truncate_prompt_tokens", &truncate);
  if (truncate) {
    if (*truncate < 1) {
      return ApiError::BadRequest(
          "truncate_prompt_tokens must be >= 1, got " + std::to_string(*truncate),
          "truncate_prompt_tokens");
    }
    params.truncate_prompt_tokens = static_cast<int>(std::min<int64_t>(*truncate, 1 << 30));
  }
  VLLM_READ(GetIntList, "allowed_token_ids", &params.allowed_token_ids);
  VLLM_READ(GetStringOrList, "bad_words", &params.bad_words);
  if (auto bias = GetObject(body, "logit_bias"); !bias.ok()) {
    return ApiError::BadRequest(bias.error(), "logit_bias");
  } else if (bias->has_value()) {
    for (const auto& [key, value] : (*bias)->items()) {
      size_t parsed = 0;
      long long token_id = -1;
      try {
        token_id = std::stoll(key, &parsed);
      } catch (const std::exception&) {
        parsed = 0;
      }
      if (parsed != key.size() || token_id < 0 || token_id > INT32_MAX || !value.is_number()) {
        return ApiError::BadRequest("logit_bias: keys must be token ids and values numbers",
                                    "logit_bias");
      }
      params.logit_bias[static_cast<int32_t>(token_id)] =
          std::clamp(value.get<float>(), -100.0f, 100.0f);
    }
  }
  int64_t priority = 0;
  VLLM_READ(GetInt, "priority", &priority);
  request->options.priority = static_cast<int>(std::clamp<int64_t>(priority, INT32_MIN, INT32_MAX));
  VLLM_READ(GetString, "cache_salt", &request->options.cache_salt);
  VLLM_READ(GetString, "request_id", &request->request_id);
  VLLM_READ(GetBool, "use_beam_search", &request->use_beam_search);
  VLLM_READ(GetNumber, "length_penalty", &request->length_penalty);
  std::optional<int64_t> prompt_logprobs;
  VLLM_READ(GetInt, "prompt_logprobs", &prompt_logprobs);
  if (prompt_logprobs && request->stream) {
    return ApiError::BadRequest("`prompt_logprobs` are not available when `stream=True`.",
                                "prompt_logprobs");
  }

  std::optional<int64_t> logprobs;
  if (endpoint == Endpoint::kCompletions) {
    VLLM_READ(GetInt, "max_tokens", &request->requested_max_tokens);
    if (!body.contains("max_tokens")) request->requested_max_tokens = 16;  // OpenAI's default
    VLLM_READ(GetBool, "echo", &request->echo);
    VLLM_READ(GetInt, "logprobs", &logprobs);
    if (logprobs && *logprobs < 0) {
      return ApiError::BadRequest("`logprobs` must be a positive value.", "logprobs");
    }
    request->add_special_tokens = true;
    // With echo, the prompt's logprobs come back too (in whole responses).
    if (request->echo && logprobs && !prompt_logprobs && !request->stream) {
      prompt_logprobs = logprobs;
    }
  } else {
    VLLM_READ(GetInt, "max_completion_tokens", &request->requested_max_tokens);
    if (!request->requested_max_tokens) {
      VLLM_READ(GetInt, "max_tokens", &request->requested_max_tokens);
    }
    bool want_logprobs = false;
    int64_t top_logprobs = 0;
    VLLM_READ(GetBool, "logprobs", &want_logprobs);
    VLLM_READ(GetInt, "top_logprobs", &top_logprobs);
    if (top_logprobs < 0) {
      return ApiError::BadRequest("`top_logprobs` must be a positive value.", "top_logprobs");
    }
    if (!want_logprobs && top_logprobs > 0) {
      return ApiError::BadRequest("when using `top_logprobs`, `logprobs` must be set to true.",
                                  "top_logprobs");
    }
    if (want_logprobs) logprobs = top_logprobs;
    request->add_special_tokens = false;
    VLLM_READ(GetBool, "echo", &request->echo);
  }
  VLLM_READ(GetBool, "add_special_tokens", &request->add_special_tokens);
  VLLM_READ(GetBool, "return_tokens_as_token_ids", &request->tokens_as_ids);
  if (logprobs) {
    if (*logprobs > kMaxLogprobs) {
      return ApiError::BadRequest(
          "Requested sample logprobs of " + std::to_string(*logprobs) +
              ", which is greater than max allowed: " + std::to_string(kMaxLogprobs),
          endpoint == Endpoint::kChat ? "top_logprobs" : "logprobs");
    }
    params.logprobs = static_cast<int>(*logprobs);
  }
  if (prompt_logprobs) {
    if (*prompt_logprobs < 0 || *prompt_logprobs > kMaxLogprobs) {
      return ApiError::BadRequest(
          "Requested prompt logprobs of " + std::to_string(*prompt_logprobs) +
              ", which is greater than max allowed: " + std::to_string(kMaxLogprobs),
          "prompt_logprobs");
    }
    params.prompt_logprobs = static_cast<int>(*prompt_logprobs);
  }
  if (request->requested_max_tokens && *request->requested_max_tokens < 1) {
    return ApiError::BadRequest("max_tokens must be at least 1, got " +
                                    std::to_string(*request->requested_max_tokens) + ".",
                                "max_tokens");
  }
  if (auto error = CheckUnsupportedFields(body, endpoint, params.n)) return error;
  if (auto error = ParseStructuredOutputs(body, &params)) return error;
  params.max_tokens.reset();
  params.output_kind = RequestOutputKind::kDelta;
  // The checks SamplingParams makes itself, except max_tokens (resolved with the prompt).
  if (std::string error = params.Validate(); !error.empty()) {
    return ApiError::BadRequest(error, error.substr(0, error.find(' ')));
  }
  if (request->use_beam_search) {  // a step asks for 2 * n logprobs
    if (std::string error = BeamSearchParamsOf(*request, 1).Validate(); !error.empty()) {
      return ApiError::BadRequest(error, "n");
    }
  }
  return std::nullopt;
}

#undef VLLM_READ

BeamSearchParams BeamSearchParamsOf(const GenerationRequest& request, int max_tokens) {
  BeamSearchParams params;
  params.beam_width = request.params.n;
  params.max_tokens = max_tokens;
  params.ignore_eos = request.params.ignore_eos;
  params.temperature = request.params.temperature;
  params.length_penalty = request.length_penalty;
  params.include_stop_str_in_output = request.params.include_stop_str_in_output;
  params.skip_special_tokens = request.params.skip_special_tokens;
  return params;
}

ApiError PromptTooLarge(size_t num_bytes, size_t max_bytes, std::string param) {
  return ApiError::BadRequest("The prompt is " + std::to_string(num_bytes) +
                                  " bytes long; this server accepts at most " +
                                  std::to_string(max_bytes) + " bytes (--max-prompt-bytes).",
                              std::move(param));
}

std::optional<ApiError> CheckTokenIds(const SamplingParams& params, int64_t vocab_size) {
  for (const auto& [token_id, bias] : params.logit_bias) {
    if (token_id >= vocab_size) {
      return ApiError::BadRequest(
          "token_id " + std::to_string(token_id) + " in logit_bias contains out-of-vocab token id",
          "logit_bias");
    }
  }
  if (params.allowed_token_ids) {
    if (params.allowed_token_ids->empty()) {
      return ApiError::BadRequest("allowed_token_ids is not allowed to be empty.",
                                  "allowed_token_ids");
    }
    for (int32_t token_id : *params.allowed_token_ids) {
      if (token_id < 0 || token_id >= vocab_size) {
        return ApiError::BadRequest("allowed_token_ids contains out-of-vocab token id!",
                                    "allowed_token_ids");
      }
    }
  }
  return std::nullopt;
}

std::optional<ApiError> ResolveMaxTokens(const GenerationRequest& request,
                                         int64_t num_prompt_tokens, int64_t max_model_len,
                                         SamplingParams* params) {
  if (num_prompt_tokens >= max_model_len) {
    const char* input = request.endpoint == Endpoint::kChat ? "messages" : "prompt";
    return ApiError::BadRequest(
        "This model's maximum context length is " + std::to_string(max_model_len) +
            " tokens. However, your request has " + std::to_string(num_prompt_tokens) +
            " input tokens. Please reduce the length of the input " + input + ".",
        input);
  }
  int64_t max_tokens = max_model_len - num_prompt_tokens;
  if (request.requested_max_tokens)
    max_tokens = std::min(max_tokens, *request.requested_max_tokens);
  params->max_tokens = static_cast<int>(max_tokens);
  if (params->min_tokens > max_tokens) params->min_tokens = static_cast<int>(max_tokens);
  return std::nullopt;
}

}  // namespace vllm::server
