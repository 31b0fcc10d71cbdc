// The server's one way of reading JSON: request bodies parsed at the edge under a nesting limit
// (keys keep their order, as Python dicts do), and typed, checked access to request fields with
// messages that name the field.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/expected.h"
#include "server/openai/api_error.h"

namespace vllm::server {

using Json = nlohmann::ordered_json;

// The deepest nesting of arrays and objects a request body may have. Real requests stay far
// below (a tool's JSON schema rarely nests 20 levels); every recursive walk of a parsed body
// (copies, dumps, the chat template's conversion) is then bounded by it.
inline constexpr int kMaxJsonDepth = 128;

// Parses a request body that must be a JSON object. The nesting depth is measured by a linear
// scan before anything is built, so a hostile body never reaches recursive code. Errors are 400s
// with vLLM-style messages.
Expected<Json> ParseJsonObject(std::string_view text, int max_depth = kMaxJsonDepth);
// The same for any JSON value (model output, for one: tool-call arguments).
Expected<Json> ParseJson(std::string_view text, int max_depth = kMaxJsonDepth);

// Serializes to one line; invalid UTF-8 (a partial character in a token) becomes U+FFFD.
std::string DumpJson(const Json& value);

// Whether `object` has field `name` with a value other than null.
bool IsPresent(const Json& object, const char* name);

// Typed getters: nullopt when the field is absent or null; an Error "<name>: Input should be
// a valid <type>" when it has another type.
Expected<std::optional<bool>> GetBool(const Json& body, const char* name);
Expected<std::optional<int64_t>> GetInt(const Json& body, const char* name);
Expected<std::optional<double>> GetNumber(const Json& body, const char* name);
Expected<std::optional<std::string>> GetString(const Json& body, const char* name);
Expected<std::optional<std::vector<int32_t>>> GetIntList(const Json& body, const char* name);
// A string or a list of strings.
Expected<std::optional<std::vector<std::string>>> GetStringOrList(const Json& body,
                                                                  const char* name);
Expected<std::optional<Json>> GetObject(const Json& body, const char* name);

// Reads field `name` of `body` with `getter` into `*out` when present (an integer saturates to
// the range of `Out`); a 400 naming the field when it has the wrong type.
template <typename T, typename Out>
std::optional<ApiError> ReadField(const Json& body, const char* name,
                                  Expected<std::optional<T>> (*getter)(const Json&, const char*),
                                  Out* out) {
  Expected<std::optional<T>> value = getter(body, name);
  if (!value.ok()) return ApiError::BadRequest(value.error(), name);
  if (!value->has_value()) return std::nullopt;
  if constexpr (std::is_integral_v<Out> && !std::is_same_v<Out, bool> &&
                std::is_same_v<T, int64_t>) {
    *out = static_cast<Out>(std::clamp<int64_t>(**value, std::numeric_limits<Out>::min(),
                                                std::numeric_limits<Out>::max()));
  } else {
    *out = static_cast<Out>(**value);
  }
  return std::nullopt;
}

}  // namespace vllm::server
