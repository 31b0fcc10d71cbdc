#include "server/openai/structured_outputs_request.h"

namespace vllm::server {
namespace {

// A JSON Schema given as an object (or as its JSON text, as vLLM also accepts).
std::optional<ApiError> ReadSchema(const Json& value, const char* param, std::string* schema) {
  if (value.is_string()) {
    *schema = value.get<std::string>();
  } else if (value.is_object() || value.is_boolean()) {
    *schema = DumpJson(value);
  } else {
    return ApiError::BadRequest(std::string(param) + ": Input should be a JSON schema", param);
  }
  return std::nullopt;
}

// One constraint field of the `structured_outputs` object or its `guided_*` alias.
std::optional<ApiError> ReadConstraint(const Json& object, const char* name, const char* param,
                                       StructuredOutputsParams* out) {
  if (!IsPresent(object, name)) return std::nullopt;
  const Json& value = object.at(name);
  const std::string field = name;
  if (field == "json") {
    out->json.emplace();
    return ReadSchema(value, param, &*out->json);
  }
  if (field == "choice") {
    auto choices = GetStringOrList(object, name);
    if (!choices.ok() || !value.is_array()) {
      return ApiError::BadRequest(std::string(param) + ": Input should be a list of strings",
                                  param);
    }
    out->choice = **choices;
    return std::nullopt;
  }
  if (!value.is_string()) {
    return ApiError::BadRequest(std::string(param) + ": Input should be a valid string", param);
  }
  (field == "regex" ? out->regex : out->grammar) = value.get<std::string>();
  return std::nullopt;
}

std::optional<ApiError> ReadStructuredOutputsObject(const Json& object,
                                                    StructuredOutputsParams* out) {
  for (const char* name : {"json", "regex", "choice", "grammar"}) {
    const std::string param = std::string("structured_outputs.") + name;
    if (auto error = ReadConstraint(object, name, param.c_str(), out)) return error;
  }
  for (auto [name, flag] : {std::pair{"json_object", &out->json_object},
                            {"disable_any_whitespace", &out->disable_any_whitespace},
                            {"disable_additional_properties", &out->disable_additional_properties},
                            {"disable_fallback", static_cast<bool*>(nullptr)}}) {
    bool value = false;
    if (auto error = ReadField(object, name, GetBool, &value)) return error;
    if (flag != nullptr) *flag = *flag || value;
  }
  for (const char* name : {"whitespace_pattern", "structural_tag"}) {
    if (IsPresent(object, name)) {
      return ApiError::BadRequest(
          std::string("structured_outputs.") + name + " is not supported by this server yet.",
          "structured_outputs");
    }
  }
  return std::nullopt;
}

std::optional<ApiError> ReadResponseFormat(const Json& format, StructuredOutputsParams* out,
                                           bool* constrains) {
  const char* kParam = "response_format";
  if (!format.is_object() || !format.contains("type") || !format["type"].is_string()) {
    return ApiError::BadRequest("response_format: a type is required", kParam);
  }
  const std::string type = format["type"].get<std::string>();
  if (type == "text") return std::nullopt;
  if (type == "json_object") {
    out->json_object = true;
    *constrains = true;
    return std::nullopt;
  }
  if (type == "json_schema") {
    auto spec = format.find("json_schema");
    if (spec == format.end() || !spec->is_object()) {
      return ApiError::BadRequest(
          "response_format: json_schema must be set when type is json_schema", kParam);
    }
    auto schema = spec->find("schema");
    if (schema == spec->end() || schema->is_null()) {
      // OpenAI's schema is optional; vLLM's xgrammar backend then allows any JSON object.
      out->json_object = true;
    } else {
      out->json.emplace();
      if (auto error = ReadSchema(*schema, "response_format.json_schema.schema", &*out->json)) {
        return error;
      }
    }
    *constrains = true;
    return std::nullopt;
  }
  return ApiError::BadRequest(
      "response_format: type must be text, json_object or json_schema, got '" + type + "'", kParam);
}

}  // namespace

std::optional<ApiError> ParseStructuredOutputs(const Json& body, SamplingParams* params) {
  StructuredOutputsParams out;
  bool constrains = false;
  if (auto object = body.find("structured_outputs"); object != body.end() && !object->is_null()) {
    if (!object->is_object()) {
      return ApiError::BadRequest("structured_outputs: Input should be an object",
                                  "structured_outputs");
    }
    if (auto error = ReadStructuredOutputsObject(*object, &out)) return error;
    constrains = true;
  }
  for (auto [name, field] : {std::pair{"guided_json", "json"},
                             {"guided_regex", "regex"},
                             {"guided_choice", "choice"},
                             {"guided_grammar", "grammar"}}) {
    if (!IsPresent(body, name)) continue;
    Json alias = {{field, body.at(name)}};
    if (auto error = ReadConstraint(alias, field, name, &out)) return error;
    constrains = true;
  }
  if (auto backend = body.find("guided_decoding_backend");
      backend != body.end() && !backend->is_null()) {
    if (!backend->is_string() || (*backend != "auto" && *backend != "xgrammar")) {
      return ApiError::BadRequest(
          "guided_decoding_backend: this server's structured output backend is its own "
          "grammar engine; use \"auto\"",
          "guided_decoding_backend");
    }
  }
  if (IsPresent(body, "guided_whitespace_pattern")) {
    return ApiError::BadRequest("guided_whitespace_pattern is not supported by this server yet.",
                                "guided_whitespace_pattern");
  }
  if (auto format = body.find("response_format"); format != body.end() && !format->is_null()) {
    if (auto error = ReadResponseFormat(*format, &out, &constrains)) return error;
  }
  if (!constrains) return std::nullopt;
  if (std::string error = out.Validate(); !error.empty()) {
    return ApiError::BadRequest(error, "structured_outputs");
  }
  params->structured_outputs = std::move(out);
  return std::nullopt;
}

}  // namespace vllm::server
