// SamplingParams' fields, declared once: one row per field names the member (its type and default
// are the member's) and vLLM's rule for it with vLLM's message. SamplingParams::Validate, the
// server's JSON reader and the Python binding (keyword arguments and attributes) all walk this
// table, so a plain sampling parameter is its member plus its row. Fields with shapes of their own
// (logit_bias, output_kind, structured_outputs) are not rows: their readers are explicit code.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "vllm/sampling_params.h"

namespace vllm {

// vLLM's check of one number (an optional one is checked when set): `holds` tells a valid value,
// `message` is vLLM's when it fails, "{}" standing for the value.
struct SamplingFieldRule {
  bool (*holds)(double value);
  const char* message;
};

// Where a field's value may come from besides the structs themselves.
struct SamplingFieldSources {
  // The OpenAI server reads it under its own name with its type's getter; false for the fields
  // whose request shape differs by route (max_tokens, logprobs, prompt_logprobs).
  bool request = true;
  // A model's generation_config.json may set its default (vLLM's --generation-config auto).
  bool generation_config = false;
};

template <typename Member>
struct SamplingField {
  using Type = Member;
  const char* name;
  Member SamplingParams::*member;
  std::optional<SamplingFieldRule> rule;  // none: every value is valid
  SamplingFieldSources sources;
  // A check across fields, made right after this field's rule ("" when it holds).
  std::string (*related_check)(const SamplingParams& params) = nullptr;
};

namespace sampling_fields_internal {

inline std::string MinTokensWithinMaxTokens(const SamplingParams& params) {
  if (params.max_tokens && params.min_tokens > *params.max_tokens) {
    return "min_tokens must be less than or equal to max_tokens=" +
           std::to_string(*params.max_tokens) + ", got " + std::to_string(params.min_tokens) + ".";
  }
  return "";
}

template <typename Member>
constexpr SamplingField<Member> Field(
    const char* name, Member SamplingParams::*member,
    std::optional<SamplingFieldRule> rule = std::nullopt, SamplingFieldSources sources = {},
    std::string (*related_check)(const SamplingParams&) = nullptr) {
  return {name, member, rule, sources, related_check};
}

}  // namespace sampling_fields_internal

// In vLLM's declaration order, which is also the order vLLM validates them in.
inline constexpr auto kSamplingFields = [] {
  using sampling_fields_internal::Field;
  using P = SamplingParams;
  constexpr SamplingFieldSources kRouteSpecific{.request = false};
  constexpr SamplingFieldSources kAlsoGenerationConfig{.generation_config = true};
  return std::tuple{
      Field("n", &P::n, {{[](double v) { return v >= 1; }, "n must be at least 1, got {}."}}),
      Field("presence_penalty", &P::presence_penalty,
            {{[](double v) { return v >= -2 && v <= 2; },
              "presence_penalty must be in [-2, 2], got {}."}}),
      Field("frequency_penalty", &P::frequency_penalty,
            {{[](double v) { return v >= -2 && v <= 2; },
              "frequency_penalty must be in [-2, 2], got {}."}}),
      Field("repetition_penalty", &P::repetition_penalty,
            {{[](double v) { return v > 0; },
              "repetition_penalty must be greater than zero, got {}."}},
            kAlsoGenerationConfig),
      Field("temperature", &P::temperature,
            {{[](double v) { return v >= 0; }, "temperature must be non-negative, got {}."}},
            kAlsoGenerationConfig),
      Field("top_p", &P::top_p,
            {{[](double v) { return v > 0 && v <= 1; }, "top_p must be in (0, 1], got {}."}},
            kAlsoGenerationConfig),
      Field(
          "top_k", &P::top_k,
          {{[](double v) { return v >= -1; }, "top_k must be 0 (disable), or at least 1, got {}."}},
          kAlsoGenerationConfig),
      Field("min_p", &P::min_p,
            {{[](double v) { return v >= 0 && v <= 1; }, "min_p must be in [0, 1], got {}."}},
            kAlsoGenerationConfig),
      Field("seed", &P::seed),
      Field("stop", &P::stop),
      Field("stop_token_ids", &P::stop_token_ids),
      Field("ignore_eos", &P::ignore_eos),
      Field("max_tokens", &P::max_tokens,
            {{[](double v) { return v >= 1; }, "max_tokens must be at least 1, got {}."}},
            kRouteSpecific),
      Field("min_tokens", &P::min_tokens,
            {{[](double v) { return v >= 0; },
              "min_tokens must be greater than or equal to 0, got {}."}},
            {}, sampling_fields_internal::MinTokensWithinMaxTokens),
      Field("logprobs", &P::logprobs,
            {{[](double v) { return v >= -1; }, "logprobs must be non-negative, got {}."}},
            kRouteSpecific),
      Field("prompt_logprobs", &P::prompt_logprobs,
            {{[](double v) { return v >= -1; }, "prompt_logprobs must be non-negative, got {}."}},
            kRouteSpecific),
      Field("skip_special_tokens", &P::skip_special_tokens),
      Field("spaces_between_special_tokens", &P::spaces_between_special_tokens),
      Field("include_stop_str_in_output", &P::include_stop_str_in_output),
      Field("truncate_prompt_tokens", &P::truncate_prompt_tokens,
            {{[](double v) { return v >= 1; }, "truncate_prompt_tokens must be >= 1, got {}"}}),
      Field("allowed_token_ids", &P::allowed_token_ids),
      Field("bad_words", &P::bad_words),
  };
}();

// Calls visit(field) for every row, in order.
template <typename Visit>
void ForEachSamplingField(Visit&& visit) {
  std::apply([&](const auto&... field) { (visit(field), ...); }, kSamplingFields);
}

// Calls visit(field) for the rows in order until one returns true; whether one did.
template <typename Visit>
bool AnySamplingField(Visit&& visit) {
  return std::apply([&](const auto&... field) { return (visit(field) || ...); }, kSamplingFields);
}

namespace sampling_fields_internal {

template <typename T>
inline constexpr bool kIsOptional = false;
template <typename T>
inline constexpr bool kIsOptional<std::optional<T>> = true;

// A value as vLLM's message prints it: floats as Python does (1.0, 1.5, -1.0).
template <typename T>
std::string FormatValue(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    std::string text = std::to_string(value);
    text.erase(text.find_last_not_of('0') + 1);
    if (!text.empty() && text.back() == '.') text += '0';
    return text;
  } else {
    return std::to_string(value);
  }
}

// vLLM's message when `value` breaks `rule`, else "".
template <typename Number>
std::string CheckNumber(const SamplingFieldRule& rule, Number value) {
  if (rule.holds(static_cast<double>(value))) return "";
  std::string message = rule.message;
  return message.replace(message.find("{}"), 2, FormatValue(value));
}

// The field's own rule: "" when it holds, or the field has no rule or is an unset optional.
template <typename Member>
std::string CheckRule(const SamplingField<Member>& field, const SamplingParams& params) {
  if (!field.rule) return "";
  const Member& value = params.*field.member;
  if constexpr (std::is_arithmetic_v<Member>) {
    return CheckNumber(*field.rule, value);
  } else if constexpr (kIsOptional<Member>) {
    if constexpr (std::is_arithmetic_v<typename Member::value_type>) {
      if (value) return CheckNumber(*field.rule, *value);
    }
  }
  return "";
}

}  // namespace sampling_fields_internal

inline std::string SamplingParams::Validate() const {
  std::string error;
  AnySamplingField([&](const auto& field) {
    error = sampling_fields_internal::CheckRule(field, *this);
    if (error.empty() && field.related_check) error = field.related_check(*this);
    return !error.empty();
  });
  if (!error.empty()) return error;
  for (const auto& stop_string : stop) {
    if (stop_string.empty()) return "stop cannot contain an empty string.";
  }
  if (structured_outputs) return structured_outputs->Validate();
  return "";
}

}  // namespace vllm
