// Checks a JSON value against a JSON Schema. The grammar compiler uses it where a schema lists
// its values (enum, const): a member that breaks another keyword of the schema (`not`, if /
// then / else, minLength, ...) is dropped, so those keywords hold exactly with no grammar of
// their own. Also the table of JSON Schema's keywords (draft 4 to 2020-12) by the type of value
// each constrains.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/expected.h"

namespace vllm {

// Whether `keyword` is one of JSON Schema's keywords that constrain a value (not an annotation
// and not a keyword JSON Schema does not define).
bool IsJsonSchemaConstraint(std::string_view keyword);

// The type of value a constraining keyword applies to: "string", "number", "array" or
// "object"; nullptr for one that applies to every value (type, enum, not, allOf, $ref, ...) and
// for any other keyword.
const char* JsonSchemaKeywordType(std::string_view keyword);

// Whether `value` satisfies `schema` (an object or a boolean; `path` is its JSON pointer, for
// errors). Checked: type, enum, const, not, allOf, anyOf, oneOf, if / then / else, minLength,
// maxLength, minimum, maximum, exclusiveMinimum, exclusiveMaximum (draft 4's boolean forms too),
// minItems, maxItems, uniqueItems, minProperties, maxProperties, required, dependentRequired,
// dependentSchemas and dependencies. Any other constraining keyword that applies to the value
// ($ref, properties, items, pattern, format, multipleOf, ...) is an Error naming it; keywords
// for other types of value are skipped, as JSON Schema says, and so are annotations and
// keywords JSON Schema does not define.
Expected<bool> JsonValueSatisfies(const nlohmann::ordered_json& value,
                                  const nlohmann::ordered_json& schema, const std::string& path);

// Whether `value` is of the JSON Schema type `type` (an integer is a number; 1.0 is an integer).
bool JsonValueHasType(const nlohmann::ordered_json& value, std::string_view type);

}  // namespace vllm
