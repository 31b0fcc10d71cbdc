// JSON Schema helpers for the grammar compiler: local $ref resolution, and the conjunction of
// schemas (allOf, and the keywords beside an anyOf applied to each of its options) written as
// one schema where that is simple: types intersect, properties merge, required lists unite,
// bounds tighten, enum / const intersect; any other keyword must agree.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/expected.h"

namespace vllm {

// Keywords that do not change which documents a schema accepts.
bool IsJsonSchemaAnnotation(std::string_view keyword);

// The schema that a local reference ("#" or a "#/..." JSON pointer) names within `root`; an
// Error for other references or a pointer to nothing.
Expected<const nlohmann::ordered_json*> ResolveLocalRef(const nlohmann::ordered_json& root,
                                                        std::string_view ref);

// `schema` with its allOf folded into it (nested allOf and top-level $ref of the entries
// followed), or nullopt when unsatisfiable. The schema must hold an "allOf".
Expected<std::optional<nlohmann::ordered_json>> FoldAllOf(const nlohmann::ordered_json& root,
                                                          const nlohmann::ordered_json& schema);

}  // namespace vllm
