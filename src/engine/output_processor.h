// Turns engine-core outputs (token ids) into vLLM RequestOutputs: incremental detokenization,
// stop strings (held back while a partial match is pending, excluded unless asked), and the
// cumulative / delta / final-only output kinds. Requests with n > 1 gather their n sequences.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine_core.h"
#include "tokenizer/incremental_detokenizer.h"
#include "tokenizer/tokenizer.h"
#include "vllm/outputs.h"

namespace vllm {

class OutputProcessor {
 public:
  explicit OutputProcessor(const Tokenizer& tokenizer) : tokenizer_(&tokenizer) {}
  // nullptr: --skip-tokenizer-init, where outputs carry token ids and empty text.
  explicit OutputProcessor(const Tokenizer* tokenizer) : tokenizer_(tokenizer) {}

  // Registers a request and its n child ids (the ids the engine core sees).
  void AddRequest(const std::string& request_id, const std::string& prompt,
                  const std::vector<int32_t>& prompt_token_ids, const SamplingParams& params,
                  const std::vector<std::string>& child_ids);

  // Applies one step's outputs. Returns the RequestOutputs due now, and fills
  // `stopped_child_ids` with sequences a stop string finished (the caller ends them in the core).
  std::vector<RequestOutput> Process(const std::vector<EngineCoreOutput>& outputs,
                                     std::vector<std::string>* stopped_child_ids);

  bool Has(const std::string& request_id) const { return requests_.count(request_id) != 0; }
  // Positions of generated-token logprobs held for unfinished requests: in delta mode only those
  // not yet returned, in the other modes all of them (they return everything).
  size_t NumHeldLogprobPositions() const;
  // Child ids of a request (to abort it in the core).
  std::vector<std::string> ChildIds(const std::string& request_id) const;

 private:
  struct Sequence {
    std::unique_ptr<IncrementalDetokenizer> detokenizer;
    // What the sequence produced. In delta mode its token ids and logprobs are only those not
    // yet returned (each output hands them over, so a step's work and the memory held do not
    // grow with the output's length); its text stays whole for stop strings.
    CompletionOutput output;
    size_t num_text_sent = 0;  // bytes of output.text already returned (delta mode)
    bool finish_sent = false;  // its finish_reason was returned (delta mode sends it once)
  };
  struct RequestState {
    std::string prompt;
    std::vector<int32_t> prompt_token_ids;
    SamplingParams params;
    std::vector<Sequence> sequences;
    int64_t num_cached_tokens = 0;
    std::optional<double> queue_seconds;
    // When it was added, and when its steps produced the first and the latest token.
    std::chrono::steady_clock::time_point added_at;
    std::optional<std::chrono::steady_clock::time_point> first_token_at;
    std::chrono::steady_clock::time_point last_token_at;
    // [num_prompt_tokens] once complete; the first position has none (vLLM's None).
    std::optional<std::vector<std::optional<PositionLogprobs>>> prompt_logprobs;
    bool prompt_logprobs_sent = false;  // delta mode sends them once
  };

  // One token's text; empty without a tokenizer (vLLM's decoded_token None).
  std::string DecodeToken(int32_t id) const;
  // One position's logprobs (the token and the top ones), decoded.
  PositionLogprobs ToPositionLogprobs(const TokenLogprobs& logprobs) const;
  // Appends new text to a sequence and applies stop strings; returns true when one matched.
  bool AppendText(const SamplingParams& params, const std::string& delta, Sequence* sequence);
  RequestOutput MakeOutput(const std::string& request_id, RequestState& state, bool finished);

  const Tokenizer* tokenizer_;
  std::map<std::string, RequestState> requests_;
  std::map<std::string, std::pair<std::string, int>> child_to_parent_;  // child → (parent, index)
};

}  // namespace vllm
