// POST /v1/embeddings: the request as vLLM's EmbeddingCompletionRequest reads it (input: a
// string, a list of strings, a token array or a list of token arrays; encoding_format float |
// base64; dimensions; user; vLLM's truncate_prompt_tokens and normalize), and the response
// ({"object": "list", "data": [{"object": "embedding", "index", "embedding"}], "usage"}).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "server/openai/api_error.h"
#include "server/openai/json.h"
#include "server/openai/pooling_job.h"
#include "vllm/async_llm.h"
#include "vllm/outputs.h"
#include "vllm/pooling_params.h"

namespace vllm::server {

struct EmbeddingsRequest {
  std::vector<AsyncLLM::PoolingInput> inputs;
  bool base64 = false;  // encoding_format "base64": little-endian float32 bytes
  std::optional<std::string> user;
  PoolingParams params;  // dimensions, truncate_prompt_tokens, normalize
};

// The body → a request; a 400 naming the field when it is malformed.
Expected<EmbeddingsRequest> ParseEmbeddingsRequest(const Json& body, ApiError* error);

// Standard base64 (RFC 4648, padded) of the float32 values' little-endian bytes.
std::string EncodeFloatsBase64(const std::vector<float>& values);

// The response of /v1/embeddings (object "embedding", vector field "embedding") or /pooling
// ("pooling", "data"): one item per output, in input order, its vector as floats or base64.
Json VectorListResponse(const ResponseStamp& stamp, const std::string& model,
                        const std::vector<PoolingRequestOutput>& outputs, bool base64,
                        const char* object, const char* field);

}  // namespace vllm::server
