// Typed access to the fields of tokenizer.json and tokenizer_config.json: a field of the wrong
// type is an Error that names it ("model.unk_token: expected a string"), never an exception.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace vllm::hf {

using Json = nlohmann::json;

// Parses JSON text; `what` names the document in the error.
Expected<Json> ParseJson(std::string_view text, std::string_view what);

// The field `key` of `object`; nullptr when `object` is not an object or the field is absent or
// null.
const Json* FindField(const Json& object, std::string_view key);

// "context.key", for error messages.
std::string FieldName(std::string_view context, std::string_view key);

// Field readers: an absent or null field gives `fallback` (an Error when there is none).
Expected<std::string> StringField(const Json& object, std::string_view key,
                                  std::string_view context,
                                  std::optional<std::string> fallback = std::nullopt);
Expected<bool> BoolField(const Json& object, std::string_view key, std::string_view context,
                         std::optional<bool> fallback = std::nullopt);
Expected<int64_t> IntField(const Json& object, std::string_view key, std::string_view context,
                           std::optional<int64_t> fallback = std::nullopt);
// A string field that may be absent or null (nullopt then).
Expected<std::optional<std::string>> OptionalStringField(const Json& object, std::string_view key,
                                                         std::string_view context);

// tokenizer_config.json / special_tokens_map.json's "bos_token" style fields: "<s>",
// {"content": "<s>", ...} or null. nullopt when the field is absent, "" when it is null.
Expected<std::optional<std::string>> SpecialTokenField(const Json& object, std::string_view key,
                                                       std::string_view context);
// A bool field that may be absent or null (nullopt then).
Expected<std::optional<bool>> OptionalBoolField(const Json& object, std::string_view key,
                                                std::string_view context);

// An Error when `json` nests arrays / objects deeper than `max_depth` (the pipeline sections are
// parsed recursively).
Status CheckNestingDepth(const Json& json, size_t max_depth, std::string_view context);

// The items of a "Sequence" section: the array under `key`, each item parsed with
// `parse(item, context)` (Expected<std::unique_ptr<T>>); items that parse to null are dropped.
template <typename T, typename Parse>
Expected<std::vector<std::unique_ptr<T>>> ParseSequenceItems(const Json& json, std::string_view key,
                                                             std::string_view context,
                                                             const Parse& parse) {
  const Json* list = FindField(json, key);
  if (list == nullptr || !list->is_array()) {
    return Error{FieldName(context, key) + ": expected an array"};
  }
  std::vector<std::unique_ptr<T>> items;
  for (size_t i = 0; i < list->size(); ++i) {
    auto item =
        parse((*list)[i], FieldName(context, std::string(key) + "[" + std::to_string(i) + "]"));
    if (!item) return Error{item.error()};
    if (*item) items.push_back(std::move(*item));
  }
  return items;
}

// A token id: an integer in [0, kMaxTokenId].
inline constexpr int64_t kMaxTokenId = (int64_t{1} << 24) - 1;
Expected<int32_t> TokenIdFromJson(const Json& value, std::string_view context);

}  // namespace vllm::hf
