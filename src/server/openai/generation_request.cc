#include "server/openai/generation_request.h"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "common/expected.h"
#include "server/openai/structured_outputs_request.h"

namespace vllm::server {

namespace {

ApiError NotSupported(const std::string& field, const std::string& what) {
  return ApiError::BadRequest(what + " is not supported by this server yet.", field);
}

// vLLM's request fields that this build does not implement: a request that sets one to anything
// but its no-op value gets a 400 naming it, never a silent 200.
std::optional<ApiError> CheckUnsupportedFields(const Json& body, Endpoint endpoint, int n) {
  for (const char* name : {"structural_tag", "logits_processors", "kv_transfer_params",
                           "mm_processor_kwargs", "vllm_xargs"}) {
    if (IsPresent(body, name)) return NotSupported(name, std::string("`") + name + "`");
  }
  // Completions read prompt_embeds themselves (completions/prompt_embeds.h); chat has none.
  if (endpoint == Endpoint::kChat && IsPresent(body, "prompt_embeds")) {
    return NotSupported("prompt_embeds", "`prompt_embeds`");
  }
  if (auto best_of = body.find("best_of"); best_of != body.end() && !best_of->is_null()) {
    if (!best_of->is_number_integer() || best_of->get<int64_t>() != n) {
      return ApiError::BadRequest("vLLM V1 does not yet support best_of.", "best_of");
    }
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

#define VLLM_READ(getter, name, out) \
  if (auto error = ReadField(body, name, getter, out); error) return error

// model, stream and stream_options.
std::optional<ApiError> ReadStreamFields(const Json& body, GenerationRequest* request) {
  VLLM_READ(GetString, "model", &request->model);
  VLLM_READ(GetBool, "stream", &request->stream);
  auto options = GetObject(body, "stream_options");
  if (!options.ok()) return ApiError::BadRequest(options.error(), "stream_options");
  if (!options->has_value()) return std::nullopt;
  if (!request->stream) {
    return ApiError::BadRequest("Stream options can only be defined when `stream=True`.",
                                "stream_options");
  }
  const Json& stream_options = **options;
  if (auto error = ReadField(stream_options, "include_usage", GetBool, &request->include_usage)) {
    return error;
  }
  return ReadField(stream_options, "continuous_usage_stats", GetBool,
                   &request->continuous_usage_stats);
}

// One kSamplingFields row, read under its name with the getter its member's type takes.
template <typename Member>
std::optional<ApiError> ReadSamplingField(const Json& body, const SamplingField<Member>& field,
                                          SamplingParams* params) {
  Member* out = &(params->*field.member);
  if constexpr (std::is_same_v<Member, bool>) {
    return ReadField(body, field.name, GetBool, out);
  } else if constexpr (std::is_floating_point_v<Member>) {
    return ReadField(body, field.name, GetNumber, out);
  } else if constexpr (std::is_integral_v<Member>) {
    return ReadField(body, field.name, GetInt, out);
  } else if constexpr (std::is_same_v<Member, std::vector<std::string>>) {
    return ReadField(body, field.name, GetStringOrList, out);
  } else if constexpr (std::is_same_v<Member, std::vector<int32_t>> ||
                       std::is_same_v<Member, std::optional<std::vector<int32_t>>>) {
    return ReadField(body, field.name, GetIntList, out);
  } else {  // an optional integer, saturated to its range
    using Integer = typename Member::value_type;
    static_assert(std::is_integral_v<Integer>, "a sampling field type the reader does not know");
    std::optional<int64_t> value;
    if (auto error = ReadField(body, field.name, GetInt, &value)) return error;
    if (value) {
      *out = static_cast<Integer>(std::clamp<int64_t>(*value, std::numeric_limits<Integer>::min(),
                                                      std::numeric_limits<Integer>::max()));
    }
    return std::nullopt;
  }
}

// The kSamplingFields rows a request names as they are (the others differ by route), then the
// server's own limit on n. Their values are checked by SamplingParams::Validate after parsing.
std::optional<ApiError> ReadSamplingFields(const Json& body, SamplingParams* params) {
  std::optional<ApiError> error;
  AnySamplingField([&](const auto& field) {
    if (field.sources.request) error = ReadSamplingField(body, field, params);
    return error.has_value();
  });
  if (error) return error;
  if (params->n > kMaxN) {
    return ApiError::BadRequest(
        "n must be at most " + std::to_string(kMaxN) + ", got " + std::to_string(params->n) + ".",
        "n");
  }
  return std::nullopt;
}

// logit_bias: token id (a decimal string) → bias, clamped to [-100, 100] as OpenAI does.
std::optional<ApiError> ReadLogitBias(const Json& body, SamplingParams* params) {
  auto bias = GetObject(body, "logit_bias");
  if (!bias.ok()) return ApiError::BadRequest(bias.error(), "logit_bias");
  if (!bias->has_value()) return std::nullopt;
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
    params->logit_bias[static_cast<int32_t>(token_id)] =
        std::clamp(value.get<float>(), -100.0f, 100.0f);
  }
  return std::nullopt;
}

// priority, cache_salt, request_id and beam search's use_beam_search and length_penalty.
std::optional<ApiError> ReadRequestOptions(const Json& body, GenerationRequest* request) {
  int64_t priority = 0;
  VLLM_READ(GetInt, "priority", &priority);
  request->options.priority = static_cast<int>(std::clamp<int64_t>(priority, INT32_MIN, INT32_MAX));
  VLLM_READ(GetString, "cache_salt", &request->options.cache_salt);
  VLLM_READ(GetString, "request_id", &request->request_id);
  VLLM_READ(GetBool, "use_beam_search", &request->use_beam_search);
  VLLM_READ(GetNumber, "length_penalty", &request->length_penalty);
  return std::nullopt;
}

// The logprobs a request asks for, in its route's shape: completions' `logprobs` count,
// chat's `logprobs` flag with `top_logprobs`; nullopt when none.
struct RequestedLogprobs {
  std::optional<int64_t> sample;
  std::optional<int64_t> prompt;
};

// /v1/completions: max_tokens (OpenAI's default 16), echo and the logprobs count; with echo,
// whole responses carry the prompt's logprobs too.
std::optional<ApiError> ReadCompletionsFields(const Json& body, GenerationRequest* request,
                                              RequestedLogprobs* logprobs) {
  VLLM_READ(GetInt, "max_tokens", &request->requested_max_tokens);
  if (!body.contains("max_tokens")) request->requested_max_tokens = 16;
  VLLM_READ(GetBool, "echo", &request->echo);
  VLLM_READ(GetInt, "logprobs", &logprobs->sample);
  if (logprobs->sample && *logprobs->sample < 0) {
    return ApiError::BadRequest("`logprobs` must be a positive value.", "logprobs");
  }
  request->add_special_tokens = true;
  if (request->echo && logprobs->sample && !logprobs->prompt && !request->stream) {
    logprobs->prompt = logprobs->sample;
  }
  return std::nullopt;
}

// /v1/chat/completions: max_completion_tokens (else max_tokens), the logprobs flag with
// top_logprobs, and echo.
std::optional<ApiError> ReadChatFields(const Json& body, GenerationRequest* request,
                                       RequestedLogprobs* logprobs) {
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
  if (want_logprobs) logprobs->sample = top_logprobs;
  request->add_special_tokens = false;
  VLLM_READ(GetBool, "echo", &request->echo);
  return std::nullopt;
}

// The route's max_tokens and logprobs fields, then the ones both routes share.
std::optional<ApiError> ReadLengthAndLogprobFields(const Json& body, GenerationRequest* request,
                                                   RequestedLogprobs* logprobs) {
  VLLM_READ(GetInt, "prompt_logprobs", &logprobs->prompt);
  if (logprobs->prompt && request->stream) {
    return ApiError::BadRequest("`prompt_logprobs` are not available when `stream=True`.",
                                "prompt_logprobs");
  }
  auto route_error = request->endpoint == Endpoint::kCompletions
                         ? ReadCompletionsFields(body, request, logprobs)
                         : ReadChatFields(body, request, logprobs);
  if (route_error) return route_error;
  VLLM_READ(GetBool, "add_special_tokens", &request->add_special_tokens);
  VLLM_READ(GetBool, "return_token_ids", &request->return_token_ids);
  VLLM_READ(GetBool, "return_tokens_as_token_ids", &request->tokens_as_ids);
  return std::nullopt;
}

// The logprobs counts within vLLM's max_logprobs, into params; max_tokens at least 1.
std::optional<ApiError> CheckLengthAndLogprobs(const RequestedLogprobs& logprobs,
                                               GenerationRequest* request) {
  if (logprobs.sample) {
    if (request->max_logprobs != -1 && *logprobs.sample > request->max_logprobs) {
      return ApiError::BadRequest(
          "Requested sample logprobs of " + std::to_string(*logprobs.sample) +
              ", which is greater than max allowed: " + std::to_string(request->max_logprobs),
          request->endpoint == Endpoint::kChat ? "top_logprobs" : "logprobs");
    }
    request->params.logprobs = static_cast<int>(*logprobs.sample);
  }
  if (logprobs.prompt) {
    if (*logprobs.prompt < 0 ||
        (request->max_logprobs != -1 && *logprobs.prompt > request->max_logprobs)) {
      return ApiError::BadRequest(
          "Requested prompt logprobs of " + std::to_string(*logprobs.prompt) +
              ", which is greater than max allowed: " + std::to_string(request->max_logprobs),
          "prompt_logprobs");
    }
    request->params.prompt_logprobs = static_cast<int>(*logprobs.prompt);
  }
  if (request->requested_max_tokens && *request->requested_max_tokens < 1) {
    return ApiError::BadRequest("max_tokens must be at least 1, got " +
                                    std::to_string(*request->requested_max_tokens) + ".",
                                "max_tokens");
  }
  return std::nullopt;
}

#undef VLLM_READ

// SamplingParams' own checks (the one Validate of a request, into request->checked_params),
// except max_tokens, which is resolved with the prompt; then beam search's, when asked for.
std::optional<ApiError> ValidateParsedRequest(GenerationRequest* request) {
  SamplingParams& params = request->params;
  // What is left in max_tokens is the engine's default (a request's goes to requested_max_tokens),
  // unless it is SamplingParams' own 16 (a max_new_tokens of exactly 16 is taken for it).
  if (params.max_tokens != SamplingParams().max_tokens) {
    request->default_max_tokens = params.max_tokens;
  }
  params.max_tokens.reset();
  params.output_kind = RequestOutputKind::kDelta;
  auto checked = ValidatedSamplingParams::Validate(params);
  if (!checked) {
    return ApiError::BadRequest(checked.error(),
                                checked.error().substr(0, checked.error().find(' ')));
  }
  request->checked_params = std::move(*checked);
  if (request->use_beam_search) {  // a step asks for 2 * n logprobs
    auto step = ValidatedSamplingParams::BeamSearchStep(BeamSearchParamsOf(*request, 1));
    if (!step) return ApiError::BadRequest(step.error(), "n");
    request->beam_search_step = std::move(*step);
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> ParseGenerationRequest(const Json& body, Endpoint endpoint,
                                               GenerationRequest* request,
                                               const RouteEdits& route_edits) {
  request->endpoint = endpoint;
  if (auto error = ReadStreamFields(body, request)) return error;
  if (auto error = ReadSamplingFields(body, &request->params)) return error;
  if (auto error = ReadLogitBias(body, &request->params)) return error;
  if (auto error = ReadRequestOptions(body, request)) return error;
  RequestedLogprobs logprobs;
  if (auto error = ReadLengthAndLogprobFields(body, request, &logprobs)) return error;
  if (auto error = CheckLengthAndLogprobs(logprobs, request)) return error;
  if (auto error = CheckUnsupportedFields(body, endpoint, request->params.n)) return error;
  if (auto error = ParseStructuredOutputs(body, &request->params)) return error;
  if (route_edits) {
    if (auto error = route_edits(request)) return error;
  }
  return ValidateParsedRequest(request);
}

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
                                         ValidatedSamplingParams* params) {
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
  if (request.default_max_tokens) max_tokens = std::min(max_tokens, *request.default_max_tokens);
  *params = params->WithMaxTokens(static_cast<int>(max_tokens));
  return std::nullopt;
}

}  // namespace vllm::server
