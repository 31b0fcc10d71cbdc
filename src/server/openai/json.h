// The JSON type of the server (keys keep their order, as Python dicts do) and typed, checked
// access to request fields with messages that name the field.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"

namespace vllm::server {

using Json = nlohmann::ordered_json;

// Serializes to one line; invalid UTF-8 (a partial character in a token) becomes U+FFFD.
std::string DumpJson(const Json& value);

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

}  // namespace vllm::server
