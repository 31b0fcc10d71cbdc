// A JSON Schema check of one value, for the keywords that are cheap to decide exactly.
#include "structured_output/json_schema_value_check.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "structured_output/json_number_grammar.h"

namespace vllm {
namespace {

using Json = nlohmann::ordered_json;

struct KeywordType {
  std::string_view keyword;
  const char* type;  // nullptr: every value
};

// JSON Schema's constraining keywords, drafts 4 to 2020-12, with the type each applies to.
// `format` is an annotation in 2020-12 by default; it is enforced here, as vLLM's backends do.
constexpr std::array<KeywordType, 43> kConstraints = {{
    {"$ref", nullptr},
    {"$dynamicRef", nullptr},
    {"$recursiveRef", nullptr},
    {"type", nullptr},
    {"enum", nullptr},
    {"const", nullptr},
    {"allOf", nullptr},
    {"anyOf", nullptr},
    {"oneOf", nullptr},
    {"not", nullptr},
    {"if", nullptr},
    {"then", nullptr},
    {"else", nullptr},
    {"minLength", "string"},
    {"maxLength", "string"},
    {"pattern", "string"},
    {"format", "string"},
    {"multipleOf", "number"},
    {"minimum", "number"},
    {"maximum", "number"},
    {"exclusiveMinimum", "number"},
    {"exclusiveMaximum", "number"},
    {"items", "array"},
    {"prefixItems", "array"},
    {"additionalItems", "array"},
    {"unevaluatedItems", "array"},
    {"contains", "array"},
    {"minContains", "array"},
    {"maxContains", "array"},
    {"minItems", "array"},
    {"maxItems", "array"},
    {"uniqueItems", "array"},
    {"properties", "object"},
    {"patternProperties", "object"},
    {"additionalProperties", "object"},
    {"unevaluatedProperties", "object"},
    {"propertyNames", "object"},
    {"required", "object"},
    {"minProperties", "object"},
    {"maxProperties", "object"},
    {"dependentRequired", "object"},
    {"dependentSchemas", "object"},
    {"dependencies", "object"},
}};

const KeywordType* FindConstraint(std::string_view keyword) {
  auto found = std::find_if(kConstraints.begin(), kConstraints.end(),
                            [&](const KeywordType& entry) { return entry.keyword == keyword; });
  return found == kConstraints.end() ? nullptr : &*found;
}

Error Fail(const std::string& path, const std::string& message) {
  return Error{"JSON schema at " + path + ": " + message};
}

// The number of code points of UTF-8 text (JSON Schema counts string length in code points).
size_t CodePointCount(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// How many elements, characters or properties the value has, for the count keywords.
size_t SizeOf(const Json& value) {
  return value.is_string() ? CodePointCount(value.get_ref<const std::string&>()) : value.size();
}

Expected<bool> Satisfies(const Json& value, const Json& schema, const std::string& path);

Expected<bool> HasOneOfTypes(const Json& value, const Json& argument, const std::string& path) {
  const Json names = argument.is_array() ? argument : Json::array({argument});
  bool matches = false;
  for (const Json& name : names) {
    if (!name.is_string()) return Fail(path, "`type` must be a type name or an array of them");
    const std::string& type = name.get_ref<const std::string&>();
    if (type != "string" && type != "number" && type != "integer" && type != "boolean" &&
        type != "null" && type != "object" && type != "array") {
      return Fail(path, "unknown type \"" + type + "\"");
    }
    matches = matches || JsonValueHasType(value, type);
  }
  return matches;
}

Expected<bool> Combination(const Json& value, const std::string& keyword, const Json& options,
                           const std::string& path) {
  if (!options.is_array() || options.empty()) {
    return Fail(path, "`" + keyword + "` must be a non-empty array");
  }
  size_t num_satisfied = 0;
  for (size_t i = 0; i < options.size(); ++i) {
    auto holds = Satisfies(value, options[i], path + "/" + std::to_string(i));
    if (!holds) return holds;
    num_satisfied += *holds ? 1 : 0;
  }
  if (keyword == "allOf") return num_satisfied == options.size();
  if (keyword == "anyOf") return num_satisfied > 0;
  return num_satisfied == 1;  // oneOf
}

// if / then / else; `schema_path` is the JSON pointer of the schema holding them.
Expected<bool> Conditional(const Json& value, const Json& schema, const std::string& schema_path) {
  auto condition = Satisfies(value, schema["if"], schema_path + "/if");
  if (!condition) return condition;
  const char* branch = *condition ? "then" : "else";
  if (!schema.contains(branch)) return true;
  return Satisfies(value, schema[branch], schema_path + "/" + branch);
}

// `value` against the bound `keyword` (direction 1: a minimum, -1: a maximum), with draft 4's
// boolean exclusive keyword applied to the inclusive one.
Expected<bool> WithinBound(const Json& value, const Json& schema, const std::string& keyword,
                           const char* inclusive_keyword, const char* exclusive_keyword,
                           int direction, const std::string& path) {
  const Json& bound = schema[keyword];
  if (bound.is_boolean() && keyword == exclusive_keyword) return true;  // (draft 4's flag)
  auto bound_value = DecimalFromJson(bound);
  if (!bound_value) return Fail(path, bound_value.error());
  auto number = DecimalFromJson(value);
  if (!number) return Fail(path, number.error());
  const int order = CompareDecimals(*number, *bound_value) * direction;
  bool exclusive = keyword == exclusive_keyword;
  if (keyword == inclusive_keyword && schema.contains(exclusive_keyword)) {
    const Json& flag = schema[exclusive_keyword];
    exclusive = flag.is_boolean() && flag.get<bool>();
  }
  return exclusive ? order > 0 : order >= 0;
}

Expected<bool> HasAllKeys(const Json& value, const Json& keys, const std::string& path) {
  if (!keys.is_array()) return Fail(path, "must be an array of names");
  for (const Json& key : keys) {
    if (!key.is_string()) return Fail(path, "must be an array of names");
    if (!value.contains(key.get_ref<const std::string&>())) return false;
  }
  return true;
}

// dependentRequired (names), dependentSchemas (schemas) or dependencies (either): what each
// present property asks of the object.
Expected<bool> Dependencies(const Json& value, const Json& argument, const std::string& path) {
  if (!argument.is_object()) return Fail(path, "must be an object");
  for (const auto& [trigger, needed] : argument.items()) {
    if (!value.contains(trigger)) continue;
    auto holds = needed.is_array() ? HasAllKeys(value, needed, path + "/" + trigger)
                                   : Satisfies(value, needed, path + "/" + trigger);
    if (!holds) return holds;
    if (!*holds) return false;
  }
  return true;
}

// Whether `value` satisfies one keyword of `schema` (at `schema_path`) that applies to it.
Expected<bool> SatisfiesKeyword(const Json& value, const Json& schema, const std::string& keyword,
                                const std::string& schema_path) {
  const Json& argument = schema[keyword];
  const std::string path = schema_path + "/" + keyword;
  if (keyword == "type") return HasOneOfTypes(value, argument, path);
  if (keyword == "enum") {
    if (!argument.is_array()) return Fail(path, "`enum` must be an array");
    return std::find(argument.begin(), argument.end(), value) != argument.end();
  }
  if (keyword == "const") return value == argument;
  if (keyword == "not") {
    auto holds = Satisfies(value, argument, path);
    if (!holds) return holds;
    return !*holds;
  }
  if (keyword == "allOf" || keyword == "anyOf" || keyword == "oneOf") {
    return Combination(value, keyword, argument, path);
  }
  if (keyword == "if") return Conditional(value, schema, schema_path);
  if (keyword == "then" || keyword == "else") return true;  // applied with `if`
  if (keyword == "minLength" || keyword == "minItems" || keyword == "minProperties" ||
      keyword == "maxLength" || keyword == "maxItems" || keyword == "maxProperties") {
    if (!argument.is_number() || argument.get<double>() < 0 ||
        std::floor(argument.get<double>()) != argument.get<double>()) {
      return Fail(path, "`" + keyword + "` must be a non-negative integer");
    }
    // (a value's size is far below 2^53, below which doubles are exact)
    const auto size = static_cast<double>(SizeOf(value));
    return keyword.compare(0, 3, "min") == 0 ? size >= argument.get<double>()
                                             : size <= argument.get<double>();
  }
  if (keyword == "minimum" || keyword == "exclusiveMinimum") {
    return WithinBound(value, schema, keyword, "minimum", "exclusiveMinimum", 1, path);
  }
  if (keyword == "maximum" || keyword == "exclusiveMaximum") {
    return WithinBound(value, schema, keyword, "maximum", "exclusiveMaximum", -1, path);
  }
  if (keyword == "uniqueItems") {
    if (!argument.is_boolean()) return Fail(path, "`uniqueItems` must be a boolean");
    if (!argument.get<bool>()) return true;
    for (size_t i = 0; i < value.size(); ++i) {
      for (size_t j = i + 1; j < value.size(); ++j) {
        if (value[i] == value[j]) return false;
      }
    }
    return true;
  }
  if (keyword == "required") return HasAllKeys(value, argument, path);
  if (keyword == "dependentRequired" || keyword == "dependentSchemas" ||
      keyword == "dependencies") {
    return Dependencies(value, argument, path);
  }
  return Fail(path, "`" + keyword + "` is not supported beside `enum` or `const`");
}

Expected<bool> Satisfies(const Json& value, const Json& schema, const std::string& path) {
  if (schema.is_boolean()) return schema.get<bool>();
  if (!schema.is_object()) return Fail(path, "a schema must be an object or a boolean");
  for (const auto& [keyword, argument] : schema.items()) {
    const KeywordType* constraint = FindConstraint(keyword);
    if (constraint == nullptr) continue;  // an annotation or not JSON Schema's
    if (constraint->type != nullptr && !JsonValueHasType(value, constraint->type)) continue;
    auto holds = SatisfiesKeyword(value, schema, keyword, path);
    if (!holds) return holds;
    if (!*holds) return false;
  }
  return true;
}

}  // namespace

bool IsJsonSchemaConstraint(std::string_view keyword) { return FindConstraint(keyword) != nullptr; }

const char* JsonSchemaKeywordType(std::string_view keyword) {
  const KeywordType* constraint = FindConstraint(keyword);
  return constraint == nullptr ? nullptr : constraint->type;
}

bool JsonValueHasType(const nlohmann::ordered_json& value, std::string_view type) {
  if (type == "string") return value.is_string();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    if (value.is_number_integer()) return true;
    if (!value.is_number_float()) return false;
    const double number = value.get<double>();
    return std::isfinite(number) && std::floor(number) == number;
  }
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  return false;
}

Expected<bool> JsonValueSatisfies(const nlohmann::ordered_json& value,
                                  const nlohmann::ordered_json& schema, const std::string& path) {
  return Satisfies(value, schema, path);
}

}  // namespace vllm
