// vLLM's RequestOutput / CompletionOutput: what a request has produced so far.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace vllm {

struct Logprob {
  float logprob = 0.0f;
  int rank = 0;  // 1 = most likely
  std::string decoded_token;
};

// For one position: token id → its logprob (the sampled token plus the top ones).
using PositionLogprobs = std::map<int32_t, Logprob>;

struct CompletionOutput {
  int index = 0;
  std::string text;
  std::vector<int32_t> token_ids;
  double cumulative_logprob = 0.0;
  std::optional<std::vector<PositionLogprobs>> logprobs;
  std::string finish_reason;  // "stop", "length", "abort"; empty while unfinished
  // The stop string or stop token id that ended it; monostate otherwise.
  std::variant<std::monostate, std::string, int32_t> stop_reason;

  bool finished() const { return !finish_reason.empty(); }
};

struct RequestOutput {
  std::string request_id;
  std::string prompt;
  std::vector<int32_t> prompt_token_ids;
  std::optional<std::vector<std::optional<PositionLogprobs>>> prompt_logprobs;
  std::vector<CompletionOutput> outputs;
  bool finished = false;
  int64_t num_cached_tokens = 0;
  // Seconds the request waited before it was first scheduled (its first sequence's); nullopt
  // until then.
  std::optional<double> queue_seconds;
  // In the final output of a request that produced tokens (vLLM's PREFILL and DECODE phases, as
  // the engine saw its steps): first scheduled → first token, first token → last token.
  std::optional<double> prefill_seconds;
  std::optional<double> decode_seconds;
};

// vLLM's PoolingRequestOutput and its task-specific forms: what a pooling request produced (it
// finishes in the step that computes its prompt).
struct PoolingOutput {
  std::vector<float> data;  // the pooler's output (per token, flattened, for ALL pooling)
};
struct EmbeddingOutput {
  std::vector<float> embedding;  // [hidden_size], or [dimensions]
};
struct ClassificationOutput {
  std::vector<float> probs;  // [num_labels]
};
struct ScoringOutput {
  float score = 0.0f;
};

template <typename Output>
struct PoolingRequestOutputOf {
  std::string request_id;
  std::vector<int32_t> prompt_token_ids;
  bool finished = false;
  Output outputs;
};
using PoolingRequestOutput = PoolingRequestOutputOf<PoolingOutput>;
using EmbeddingRequestOutput = PoolingRequestOutputOf<EmbeddingOutput>;
using ClassificationRequestOutput = PoolingRequestOutputOf<ClassificationOutput>;
using ScoringRequestOutput = PoolingRequestOutputOf<ScoringOutput>;

}  // namespace vllm
