// The fields /v1/completions and /v1/chat/completions share — the OpenAI sampling parameters and
// vLLM's extra ones — parsed and checked into SamplingParams as vLLM's protocol does.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "server/openai/api_error.h"
#include "server/openai/json.h"
#include "vllm/async_llm.h"
#include "vllm/beam_search.h"
#include "vllm/sampling_params.h"
#include "vllm/validated_sampling_params.h"

namespace vllm::server {

enum class Endpoint { kCompletions, kChat };

// The most completions one request may ask for.
inline constexpr int kMaxN = 128;

struct GenerationRequest {
  Endpoint endpoint = Endpoint::kCompletions;  // the route it came on
  std::string model;
  SamplingParams params;  // as parsed; unchanged once parsing has checked them
  // `params` as parsing checked them (the request's one check): what the engine is given, with
  // each prompt's max_tokens (ResolveMaxTokens).
  ValidatedSamplingParams checked_params;
  // use_beam_search: what each beam search step's requests sample with, checked with the rest.
  std::optional<ValidatedSamplingParams> beam_search_step;
  std::optional<int64_t> requested_max_tokens;
  // The model's max_tokens default (generation_config's max_new_tokens), which caps a request's
  // as in vLLM; taken from `params` before they are validated.
  std::optional<int64_t> default_max_tokens;
  bool stream = false;
  bool include_usage = false;           // stream_options.include_usage
  bool continuous_usage_stats = false;  // stream_options.continuous_usage_stats
  bool echo = false;
  // vLLM's return_token_ids: the prompt's token ids and each choice's (completions: both on each
  // choice; chat: prompt_token_ids on the response, token_ids on each choice).
  bool return_token_ids = false;
  bool tokens_as_ids = false;  // return_tokens_as_token_ids: logprobs name tokens "token_id:<id>"
  bool add_special_tokens = true;
  RequestOptions options;                 // priority, cache_salt
  std::optional<std::string> request_id;  // the body's "request_id"
  bool use_beam_search = false;           // n beams instead of n samples
  float length_penalty = 1.0f;            // beam search's
  // The most logprobs it may ask for per position: the server's --max-logprobs, set before
  // parsing (-1: the vocabulary, which the engine checks).
  int max_logprobs = 20;
};

// A route's own changes to the parsed params (a chat's tools), made before they are checked.
using RouteEdits = std::function<std::optional<ApiError>(GenerationRequest* request)>;

// Parses the shared fields of a request body (a JSON object) over the defaults already in
// request->params (the model's), applies `route_edits`, then checks the params once (vLLM's
// messages), into request->checked_params. Unknown fields are ignored.
std::optional<ApiError> ParseGenerationRequest(const Json& body, Endpoint endpoint,
                                               GenerationRequest* request,
                                               const RouteEdits& route_edits = {});

// vLLM's to_beam_search_params: the request's beam search with `max_tokens` (its prompt's).
BeamSearchParams BeamSearchParamsOf(const GenerationRequest& request, int max_tokens);

// The 400 for a prompt (or message content, or rendered chat) over the per-request byte limit.
ApiError PromptTooLarge(size_t num_bytes, size_t max_bytes, std::string param);

// Checks token ids the request names (logit_bias, allowed_token_ids) against the vocabulary.
std::optional<ApiError> CheckTokenIds(const SamplingParams& params, int64_t vocab_size);

// Refuses a prompt that leaves no room to generate, with vLLM's message naming the route's input
// (a chat's messages, a completion's prompt); otherwise sets params' max_tokens to the request's
// value capped by what the context has left.
std::optional<ApiError> ResolveMaxTokens(const GenerationRequest& request,
                                         int64_t num_prompt_tokens, int64_t max_model_len,
                                         ValidatedSamplingParams* params);

}  // namespace vllm::server
