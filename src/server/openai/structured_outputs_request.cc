#include "server/openai/structured_outputs_request.h"

#include <algorithm>
#include <iterator>
#include <vector>

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

// vLLM's structured-output backend names this server answers to (its own grammar engine).
std::optional<ApiError> CheckBackend(const Json& object, const char* name, const char* param) {
  auto backend = object.find(name);
  if (backend == object.end() || backend->is_null()) return std::nullopt;
  if (!backend->is_string() || (*backend != "auto" && *backend != "xgrammar")) {
    return ApiError::BadRequest(std::string(param) +
                                    ": this server's structured output backend is its own "
                                    "grammar engine; use \"auto\"",
                                param);
  }
  return std::nullopt;
}

std::optional<ApiError> ReadStructuredOutputsObject(const Json& object,
                                                    StructuredOutputsParams* out) {
  // vLLM's StructuredOutputsParams forbids other keys (pydantic's extra="forbid").
  static constexpr const char* kKnownKeys[] = {"json",
                                               "regex",
                                               "choice",
                                               "grammar",
                                               "json_object",
                                               "disable_fallback",
                                               "disable_any_whitespace",
                                               "disable_additional_properties",
                                               "whitespace_pattern",
                                               "structural_tag",
                                               "_backend",
                                               "_backend_was_auto"};
  for (const auto& [key, value] : object.items()) {
    if (std::find(std::begin(kKnownKeys), std::end(kKnownKeys), key) == std::end(kKnownKeys)) {
      return ApiError::BadRequest("structured_outputs." + key + ": Extra inputs are not permitted",
                                  "structured_outputs." + key);
    }
  }
  for (const char* name : {"json", "regex", "choice", "grammar"}) {
    const std::string param = std::string("structured_outputs.") + name;
    if (auto error = ReadConstraint(object, name, param.c_str(), out)) return error;
  }
  // (disable_fallback and _backend_was_auto change nothing with one backend)
  for (auto [name, flag] : {std::pair{"json_object", &out->json_object},
                            {"disable_any_whitespace", &out->disable_any_whitespace},
                            {"disable_additional_properties", &out->disable_additional_properties},
                            {"disable_fallback", static_cast<bool*>(nullptr)},
                            {"_backend_was_auto", static_cast<bool*>(nullptr)}}) {
    bool value = false;
    if (auto error = ReadField(object, name, GetBool, &value)) return error;
    if (flag != nullptr) *flag = *flag || value;
  }
  if (auto error = CheckBackend(object, "_backend", "structured_outputs._backend")) return error;
  if (IsPresent(object, "whitespace_pattern")) {
    if (!object["whitespace_pattern"].is_string()) {
      return ApiError::BadRequest(
          "structured_outputs.whitespace_pattern: Input should be a valid string",
          "structured_outputs.whitespace_pattern");
    }
    out->whitespace_pattern = object["whitespace_pattern"].get<std::string>();
  }
  if (IsPresent(object, "structural_tag")) {
    return ApiError::BadRequest(
        "structured_outputs.structural_tag is not supported by this server yet.",
        "structured_outputs");
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
  // The fields that set a constraint: more than one is ambiguous (one would silently win).
  std::vector<std::string> constraint_fields;
  if (auto object = body.find("structured_outputs"); object != body.end() && !object->is_null()) {
    if (!object->is_object()) {
      return ApiError::BadRequest("structured_outputs: Input should be an object",
                                  "structured_outputs");
    }
    if (auto error = ReadStructuredOutputsObject(*object, &out)) return error;
    if (out.num_constraints() > 0) constraint_fields.push_back("structured_outputs");
    constrains = true;
  }
  for (auto [name, field] : {std::pair{"guided_json", "json"},
                             {"guided_regex", "regex"},
                             {"guided_choice", "choice"},
                             {"guided_grammar", "grammar"}}) {
    if (!IsPresent(body, name)) continue;
    Json alias = {{field, body.at(name)}};
    if (auto error = ReadConstraint(alias, field, name, &out)) return error;
    constraint_fields.push_back(name);
    constrains = true;
  }
  if (auto error = CheckBackend(body, "guided_decoding_backend", "guided_decoding_backend")) {
    return error;
  }
  if (IsPresent(body, "guided_whitespace_pattern")) {
    const char* kParam = "guided_whitespace_pattern";
    if (!body[kParam].is_string()) {
      return ApiError::BadRequest(std::string(kParam) + ": Input should be a valid string", kParam);
    }
    if (out.whitespace_pattern) {
      return ApiError::BadRequest(
          "structured_outputs.whitespace_pattern and guided_whitespace_pattern are both set; "
          "use one.",
          kParam);
    }
    out.whitespace_pattern = body[kParam].get<std::string>();
    constrains = true;
  }
  if (auto format = body.find("response_format"); format != body.end() && !format->is_null()) {
    bool format_constrains = false;
    if (auto error = ReadResponseFormat(*format, &out, &format_constrains)) return error;
    if (format_constrains) constraint_fields.push_back("response_format");
    constrains = constrains || format_constrains;
  }
  if (constraint_fields.size() > 1) {
    return ApiError::BadRequest(
        "You can only use one kind of structured outputs constraint but multiple are specified: " +
            constraint_fields[0] + " and " + constraint_fields[1] + ".",
        constraint_fields[1]);
  }
  if (!constrains) return std::nullopt;
  if (std::string error = out.Validate(); !error.empty()) {
    return ApiError::BadRequest(error, "structured_outputs");
  }
  params->structured_outputs = std::move(out);
  return std::nullopt;
}

Expected<StructuredOutputsConfig> ParseStructuredOutputsConfig(std::string_view json_text) {
  constexpr const char* kFlag = "--structured-outputs-config";
  auto root = ParseJsonObject(json_text);
  if (!root) {
    return Error{std::string(kFlag) +
                 " must be a JSON object, e.g. '{\"disable_any_whitespace\": true}'"};
  }
  StructuredOutputsConfig config;
  for (const auto& [key, value] : root->items()) {
    if (value.is_null()) continue;  // unset, as vLLM's None
    const std::string where = std::string(kFlag) + ": \"" + key + "\"";
    if (key == "backend") {
      if (CheckBackend(*root, "backend", "backend")) {
        return Error{
            where +
            " must be \"auto\" (or \"xgrammar\"): this server's backend is its own grammar engine"};
      }
    } else if (key == "disable_fallback" || key == "disable_any_whitespace" ||
               key == "disable_additional_properties") {
      if (!value.is_boolean()) return Error{where + " must be true or false"};
      if (key == "disable_any_whitespace") config.disable_any_whitespace = value.get<bool>();
      if (key == "disable_additional_properties") {
        config.disable_additional_properties = value.get<bool>();
      }
    } else if (key == "whitespace_pattern") {
      if (!value.is_string()) return Error{where + " must be a string (a regex)"};
      config.whitespace_pattern = value.get<std::string>();
    } else {
      return Error{std::string(kFlag) + ": unknown key \"" + key +
                   "\" (supported: backend, disable_fallback, disable_any_whitespace, "
                   "disable_additional_properties, whitespace_pattern)"};
    }
  }
  if (config.whitespace_pattern && config.disable_any_whitespace) {
    return Error{std::string(kFlag) +
                 ": whitespace_pattern cannot be combined with disable_any_whitespace"};
  }
  return config;
}

void ApplyStructuredOutputsConfig(const StructuredOutputsConfig& config, SamplingParams* params) {
  if (!params->structured_outputs) return;
  StructuredOutputsParams& constraint = *params->structured_outputs;
  constraint.disable_additional_properties =
      constraint.disable_additional_properties || config.disable_additional_properties;
  if (constraint.whitespace_pattern || constraint.disable_any_whitespace) return;
  constraint.disable_any_whitespace = config.disable_any_whitespace;
  constraint.whitespace_pattern = config.whitespace_pattern;
}

}  // namespace vllm::server
