// vLLM's SamplingParams: how one request is sampled and when it stops. Field names and defaults
// follow vllm/sampling_params.py; each field's rule and message is its row in
// sampling_params_fields.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace vllm {

enum class RequestOutputKind {
  kCumulative,  // every output holds all text so far
  kDelta,       // every output holds only what is new
  kFinalOnly,   // one output, when the request finishes
};

// vLLM's StructuredOutputsParams: one constraint the output must satisfy.
struct StructuredOutputsParams {
  std::optional<std::string> json;  // a JSON Schema, as JSON text
  std::optional<std::string> regex;
  std::optional<std::vector<std::string>> choice;
  std::optional<std::string> grammar;          // GBNF / EBNF
  bool json_object = false;                    // any JSON object
  bool disable_any_whitespace = false;         // JSON without whitespace between its tokens
  bool disable_additional_properties = false;  // no properties beyond a schema's `properties`
  // A regex for the whitespace JSON may have between its tokens (json, json_object); unset: a
  // space, or a newline and an indent.
  std::optional<std::string> whitespace_pattern;

  int num_constraints() const {
    return json.has_value() + regex.has_value() + choice.has_value() + grammar.has_value() +
           json_object;
  }
  // The empty string when valid; otherwise vLLM's message.
  std::string Validate() const {
    if (num_constraints() > 1) {
      return "You can only use one kind of structured outputs constraint but multiple are "
             "specified.";
    }
    if (num_constraints() < 1) {
      return "You must use one kind of structured outputs constraint but none are specified.";
    }
    if (choice && choice->empty()) return "structured_outputs.choice must not be empty.";
    if (whitespace_pattern && disable_any_whitespace) {
      return "structured_outputs.whitespace_pattern cannot be combined with "
             "disable_any_whitespace.";
    }
    return "";
  }
};

struct SamplingParams {
  int n = 1;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  float repetition_penalty = 1.0f;
  float temperature = 1.0f;
  float top_p = 1.0f;
  int top_k = 0;  // 0 or -1: all tokens
  float min_p = 0.0f;
  std::optional<int64_t> seed;
  std::vector<std::string> stop;
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false;
  std::optional<int> max_tokens = 16;  // nullopt: up to the context length
  int min_tokens = 0;
  std::optional<int> logprobs;  // -1: the whole vocabulary
  std::optional<int> prompt_logprobs;
  bool include_stop_str_in_output = false;
  bool skip_special_tokens = true;
  bool spaces_between_special_tokens = true;
  std::optional<int> truncate_prompt_tokens;
  std::map<int32_t, float> logit_bias;
  std::optional<std::vector<int32_t>> allowed_token_ids;
  std::vector<std::string> bad_words;
  RequestOutputKind output_kind = RequestOutputKind::kCumulative;
  std::optional<StructuredOutputsParams> structured_outputs;

  // The empty string when valid; otherwise vLLM's message for the first invalid field, in vLLM's
  // order (kSamplingFields' rules, then stop strings and the structured-output constraint).
  std::string Validate() const;
};

}  // namespace vllm

// The field table Validate and every reader of the fields walk (it needs the struct above).
#include "vllm/sampling_params_fields.h"  // IWYU pragma: export
