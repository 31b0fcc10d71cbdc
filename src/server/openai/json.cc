#include "server/openai/json.h"

#include <cmath>
#include <limits>

#include "common/json_depth.h"

namespace vllm::server {
namespace {

Error TypeError(const char* name, const char* type) {
  return Error{std::string(name) + ": Input should be a valid " + type};
}

const Json* Field(const Json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

bool ToInt(const Json& value, int64_t* out) {
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() &&
        value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return false;
    }
    *out = value.get<int64_t>();
    return true;
  }
  if (value.is_number_float()) {  // 3.0 is an integer, 3.5 is not (as pydantic says)
    const double number = value.get<double>();
    if (std::trunc(number) != number || std::abs(number) > 9.0e15) return false;
    *out = static_cast<int64_t>(number);
    return true;
  }
  return false;
}

}  // namespace

Expected<Json> ParseJson(std::string_view text, int max_depth) {
  if (JsonNestsDeeperThan(text, max_depth)) {
    return Error{"The request body nests JSON deeper than " + std::to_string(max_depth) +
                 " levels."};
  }
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return Error{"The request body is not valid JSON."};
  return value;
}

Expected<Json> ParseJsonObject(std::string_view text, int max_depth) {
  auto body = ParseJson(text, max_depth);
  if (body.ok() && !body->is_object()) return Error{"The request body must be a JSON object."};
  return body;
}

std::string DumpJson(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

bool IsPresent(const Json& object, const char* name) { return Field(object, name) != nullptr; }

Expected<std::optional<bool>> GetBool(const Json& body, const char* name) {
  const Json* value = Field(body, name);
  if (!value) return std::optional<bool>();
  if (!value->is_boolean()) return TypeError(name, "boolean");
  return std::optional<bool>(value->get<bool>());
}

Expected<std::optional<int64_t>> GetInt(const Json& body, const char* name) {
  const Json* value = Field(body, name);
  if (!value) return std::optional<int64_t>();
  int64_t number = 0;
  if (!ToInt(*value, &number)) return TypeError(name, "integer");
  return std::optional<int64_t>(number);
}

Expected<std::optional<double>> GetNumber(const Json& body, const char* name) {
  const Json* value = Field(body, name);
  if (!value) return std::optional<double>();
  if (!value->is_number()) return TypeError(name, "number");
  return std::optional<double>(value->get<double>());
}

Expected<std::optional<std::string>> GetString(const Json& body, const char* name) {
  const Json* value = Field(body, name);
  if (!value) return std::optional<std::string>();
  if (!value->is_string()) return TypeError(name, "string");
  return std::optional<std::string>(value->get<std::string>());
}

Expected<std::optional<std::vector<int32_t>>> GetIntList(const Json& body, const char* name) {
  const Json* value = Field(body, name);
  if (!value) return std::optional<std::vector<int32_t>>();
  if (!value->is_array()) return TypeError(name, "list of integers");
  std::vector<int32_t> numbers;
  for (const Json& item : *value) {
    int64_t number = 0;
    if (!ToInt(item, &number) || number < std::numeric_limits<int32_t>::min() ||
        number > std::numeric_limits<int32_t>::max()) {
      return TypeError(name, "list of integers");
    }
    numbers.push_back(static_cast<int32_t>(number));
  }
  return std::optional<std::vector<int32_t>>(std::move(numbers));
}

Expected<std::optional<std::vector<std::string>>> GetStringOrList(const Json& body,
                                                                  const char* name) {
  const Json* value = Field(body, name);
  if (!value) return std::optional<std::vector<std::string>>();
  if (value->is_string()) {
    return std::optional<std::vector<std::string>>({value->get<std::string>()});
  }
  if (!value->is_array()) return TypeError(name, "string or list of strings");
  std::vector<std::string> strings;
  for (const Json& item : *value) {
    if (!item.is_string()) return TypeError(name, "string or list of strings");
    strings.push_back(item.get<std::string>());
  }
  return std::optional<std::vector<std::string>>(std::move(strings));
}

Expected<std::optional<Json>> GetObject(const Json& body, const char* name) {
  const Json* value = Field(body, name);
  if (!value) return std::optional<Json>();
  if (!value->is_object()) return TypeError(name, "dictionary");
  return std::optional<Json>(*value);
}

}  // namespace vllm::server
