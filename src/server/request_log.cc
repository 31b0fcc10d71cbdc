#include "server/request_log.h"

#include <charconv>
#include <cstdio>

#include "common/utf8.h"

namespace vllm::server {
namespace {

// Python's repr() of a float: the shortest text that reads back, with ".0" on whole numbers.
std::string FloatRepr(float value) {
  char text[32];
  const auto [end, error] = std::to_chars(text, text + sizeof(text), value);
  std::string repr(text, end);
  if (repr.find_first_of(".enai") == std::string::npos) repr += ".0";
  return repr;
}

const char* BoolRepr(bool value) { return value ? "True" : "False"; }

template <typename T>
std::string OptionalRepr(const std::optional<T>& value) {
  return value ? std::to_string(*value) : "None";
}

std::string StringOrNone(const std::optional<std::string>& value) {
  return value ? PythonStringRepr(*value) : "None";
}

std::string StringListRepr(const std::vector<std::string>& items) {
  std::string repr = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    repr += (i == 0 ? "" : ", ") + PythonStringRepr(items[i]);
  }
  return repr + "]";
}

std::string IdListRepr(std::span<const int32_t> ids) {
  std::string repr = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    repr += (i == 0 ? "" : ", ") + std::to_string(ids[i]);
  }
  return repr + "]";
}

std::string StructuredOutputsRepr(const std::optional<StructuredOutputsParams>& params) {
  if (!params) return "None";
  return "StructuredOutputsParams(json=" + StringOrNone(params->json) +
         ", regex=" + StringOrNone(params->regex) +
         ", choice=" + (params->choice ? StringListRepr(*params->choice) : "None") +
         ", grammar=" + StringOrNone(params->grammar) +
         ", json_object=" + (params->json_object ? "True" : "None") +
         ", disable_any_whitespace=" + BoolRepr(params->disable_any_whitespace) +
         ", disable_additional_properties=" + BoolRepr(params->disable_additional_properties) +
         ", whitespace_pattern=" + StringOrNone(params->whitespace_pattern) + ")";
}

// The first `max_chars` characters of UTF-8 `text` (Python slices characters, not bytes).
std::string_view FirstCharacters(std::string_view text, size_t max_chars) {
  size_t end = 0;
  for (size_t num_chars = 0; end < text.size() && num_chars < max_chars; ++num_chars) {
    end += Utf8SequenceLength(static_cast<unsigned char>(text[end]));
  }
  return text.substr(0, std::min(end, text.size()));
}

}  // namespace

std::string PythonStringRepr(std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string repr(1, quote);
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      repr += '\\';
      repr += c;
    } else if (c == '\n') {
      repr += "\\n";
    } else if (c == '\r') {
      repr += "\\r";
    } else if (c == '\t') {
      repr += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", byte);
      repr += escaped;
    } else {
      repr += c;  // printable ASCII, and UTF-8 kept as it is
    }
  }
  return repr + quote;
}

std::string SamplingParamsRepr(const SamplingParams& params) {
  std::string repr = "SamplingParams(n=" + std::to_string(params.n);
  repr += ", presence_penalty=" + FloatRepr(params.presence_penalty);
  repr += ", frequency_penalty=" + FloatRepr(params.frequency_penalty);
  repr += ", repetition_penalty=" + FloatRepr(params.repetition_penalty);
  repr += ", temperature=" + FloatRepr(params.temperature);
  repr += ", top_p=" + FloatRepr(params.top_p);
  repr += ", top_k=" + std::to_string(params.top_k);
  repr += ", min_p=" + FloatRepr(params.min_p);
  repr += ", seed=" + OptionalRepr(params.seed);
  repr += ", stop=" + StringListRepr(params.stop);
  repr += ", stop_token_ids=" + IdListRepr(params.stop_token_ids);
  repr += ", bad_words=" + StringListRepr(params.bad_words);
  repr +=
      ", include_stop_str_in_output=" + std::string(BoolRepr(params.include_stop_str_in_output));
  repr += ", ignore_eos=" + std::string(BoolRepr(params.ignore_eos));
  repr += ", max_tokens=" + OptionalRepr(params.max_tokens);
  repr += ", min_tokens=" + std::to_string(params.min_tokens);
  repr += ", logprobs=" + OptionalRepr(params.logprobs);
  repr += ", prompt_logprobs=" + OptionalRepr(params.prompt_logprobs);
  repr += ", skip_special_tokens=" + std::string(BoolRepr(params.skip_special_tokens));
  repr += ", spaces_between_special_tokens=" +
          std::string(BoolRepr(params.spaces_between_special_tokens));
  repr += ", truncate_prompt_tokens=" + OptionalRepr(params.truncate_prompt_tokens);
  repr += ", structured_outputs=" + StructuredOutputsRepr(params.structured_outputs);
  return repr + ", extra_args=None)";
}

std::string RequestLogLine(std::string_view request_id, std::string_view prompt,
                           std::span<const int32_t> prompt_token_ids, const SamplingParams& params,
                           std::optional<size_t> max_log_len, const PromptEmbeds* prompt_embeds) {
  if (prompt_embeds) {
    return "Received request " + std::string(request_id) +
           ": prompt: None, params: " + SamplingParamsRepr(params) +
           ", prompt_token_ids: None, prompt_embeds shape: torch.Size([" +
           std::to_string(prompt_embeds->num_tokens) + ", " +
           std::to_string(prompt_embeds->hidden_size) + "]), lora_request: None.";
  }
  if (max_log_len) {
    prompt = FirstCharacters(prompt, *max_log_len);
    prompt_token_ids = prompt_token_ids.first(std::min(*max_log_len, prompt_token_ids.size()));
  }
  std::string line = "Received request ";
  line += request_id;
  line += ": prompt: " + PythonStringRepr(prompt) + ", params: " + SamplingParamsRepr(params) +
          ", prompt_token_ids: " + IdListRepr(prompt_token_ids) +
          ", prompt_embeds shape: None, lora_request: None.";
  return line;
}

}  // namespace vllm::server
