#include "tokenizer/hf/json_fields.h"

#include <utility>
#include <vector>

namespace vllm::hf {

Expected<Json> ParseJson(std::string_view text, std::string_view what) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    return Error{std::string(what) + " is not valid JSON: " + e.what()};
  }
}

const Json* FindField(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string FieldName(std::string_view context, std::string_view key) {
  return context.empty() ? std::string(key) : std::string(context) + "." + std::string(key);
}

Expected<std::string> StringField(const Json& object, std::string_view key,
                                  std::string_view context, std::optional<std::string> fallback) {
  const Json* field = FindField(object, key);
  if (field == nullptr) {
    if (fallback) return *fallback;
    return Error{FieldName(context, key) + ": missing"};
  }
  if (!field->is_string()) return Error{FieldName(context, key) + ": expected a string"};
  return field->get<std::string>();
}

Expected<bool> BoolField(const Json& object, std::string_view key, std::string_view context,
                         std::optional<bool> fallback) {
  const Json* field = FindField(object, key);
  if (field == nullptr) {
    if (fallback) return *fallback;
    return Error{FieldName(context, key) + ": missing"};
  }
  if (!field->is_boolean()) return Error{FieldName(context, key) + ": expected true or false"};
  return field->get<bool>();
}

Expected<int64_t> IntField(const Json& object, std::string_view key, std::string_view context,
                           std::optional<int64_t> fallback) {
  const Json* field = FindField(object, key);
  if (field == nullptr) {
    if (fallback) return *fallback;
    return Error{FieldName(context, key) + ": missing"};
  }
  if (field->is_number_unsigned()) {
    const auto value = field->get<uint64_t>();
    if (value > static_cast<uint64_t>(INT64_MAX)) {
      return Error{FieldName(context, key) + ": integer out of range"};
    }
    return static_cast<int64_t>(value);
  }
  if (!field->is_number_integer()) return Error{FieldName(context, key) + ": expected an integer"};
  return field->get<int64_t>();
}

Expected<std::optional<std::string>> OptionalStringField(const Json& object, std::string_view key,
                                                         std::string_view context) {
  const Json* field = FindField(object, key);
  if (field == nullptr) return std::optional<std::string>();
  if (!field->is_string()) return Error{FieldName(context, key) + ": expected a string"};
  return std::optional<std::string>(field->get<std::string>());
}

Expected<std::optional<std::string>> SpecialTokenField(const Json& object, std::string_view key,
                                                       std::string_view context) {
  if (!object.is_object()) return std::optional<std::string>();
  auto it = object.find(key);
  if (it == object.end()) return std::optional<std::string>();
  if (it->is_null()) return std::optional<std::string>("");
  if (it->is_string()) return std::optional<std::string>(it->get<std::string>());
  if (it->is_object()) {
    auto content = StringField(*it, "content", FieldName(context, key));
    if (!content) return Error{content.error()};
    return std::optional<std::string>(*content);
  }
  return Error{FieldName(context, key) + ": expected a string or {\"content\": ...}"};
}

Expected<std::optional<bool>> OptionalBoolField(const Json& object, std::string_view key,
                                                std::string_view context) {
  if (FindField(object, key) == nullptr) return std::optional<bool>();
  auto value = BoolField(object, key, context);
  if (!value) return Error{value.error()};
  return std::optional<bool>(*value);
}

Status CheckNestingDepth(const Json& json, size_t max_depth, std::string_view context) {
  std::vector<std::pair<const Json*, size_t>> stack = {{&json, 1}};
  while (!stack.empty()) {
    const auto [value, depth] = stack.back();
    stack.pop_back();
    if (!value->is_structured()) continue;
    if (depth > max_depth) {
      return Error{std::string(context) + ": nested more than " + std::to_string(max_depth) +
                   " levels deep"};
    }
    for (const Json& child : *value) stack.emplace_back(&child, depth + 1);
  }
  return Status::Ok();
}

Expected<int32_t> TokenIdFromJson(const Json& value, std::string_view context) {
  if (!value.is_number_integer()) return Error{std::string(context) + ": expected a token id"};
  if (value.is_number_unsigned()
          ? value.get<uint64_t>() > static_cast<uint64_t>(kMaxTokenId)
          : (value.get<int64_t>() < 0 || value.get<int64_t>() > kMaxTokenId)) {
    return Error{std::string(context) + ": token id " + value.dump() + " is out of range [0, " +
                 std::to_string(kMaxTokenId) + "]"};
  }
  return static_cast<int32_t>(value.get<int64_t>());
}

}  // namespace vllm::hf
