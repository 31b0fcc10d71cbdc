// JSON Schema $ref resolution and schema conjunction (allOf folding).
#include "structured_output/json_schema_merge.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace vllm {
namespace {

using Json = nlohmann::ordered_json;

// How deep merges may nest (properties of properties, allOf inside allOf, $ref chains).
constexpr int kMaxMergeDepth = 32;

const std::array<std::string_view, 4> kLowerBounds = {"minimum", "exclusiveMinimum", "minLength",
                                                      "minItems"};
const std::array<std::string_view, 4> kUpperBounds = {"maximum", "exclusiveMaximum", "maxLength",
                                                      "maxItems"};

template <size_t N>
bool IsOneOf(std::string_view keyword, const std::array<std::string_view, N>& keywords) {
  return std::find(keywords.begin(), keywords.end(), keyword) != keywords.end();
}

Error MergeError(const std::string& keyword, const std::string& why) {
  return Error{"cannot combine the schemas' `" + keyword + "` (" + why + ")"};
}

std::vector<std::string> TypeNames(const Json& type) {
  if (type.is_string()) return {type.get<std::string>()};
  std::vector<std::string> names;
  if (type.is_array()) {
    for (const Json& name : type) {
      if (name.is_string()) names.push_back(name.get<std::string>());
    }
  }
  return names;
}

// The types both accept ("integer" is a kind of "number"); empty when none.
std::vector<std::string> IntersectTypes(const Json& a, const Json& b) {
  const std::vector<std::string> names_b = TypeNames(b);
  auto b_has = [&](const std::string& name) {
    return std::find(names_b.begin(), names_b.end(), name) != names_b.end();
  };
  std::vector<std::string> both;
  for (const std::string& name : TypeNames(a)) {
    if (b_has(name)) {
      both.push_back(name);
    } else if (name == "number" && b_has("integer")) {
      both.push_back("integer");
    } else if (name == "integer" && b_has("number")) {
      both.push_back("integer");
    }
  }
  both.erase(std::unique(both.begin(), both.end()), both.end());
  return both;
}

Expected<std::optional<Json>> Merge(const Json& a, const Json& b, int depth);

// The conjunction of two values of a keyword that holds a schema (items, additionalProperties,
// a property): booleans act as "anything" / "nothing".
Expected<std::optional<Json>> MergeSubschemas(const Json& a, const Json& b, int depth) {
  if (a.is_boolean()) return std::optional<Json>(a.get<bool>() ? b : a);
  if (b.is_boolean()) return std::optional<Json>(b.get<bool>() ? a : b);
  return Merge(a, b, depth + 1);
}

Expected<std::optional<Json>> Merge(const Json& a, const Json& b, int depth) {
  if (depth > kMaxMergeDepth) return Error{"schemas to combine nest too deeply"};
  if (a.is_boolean()) return a.get<bool>() ? std::optional<Json>(b) : std::nullopt;
  if (b.is_boolean()) return b.get<bool>() ? std::optional<Json>(a) : std::nullopt;
  if (!a.is_object() || !b.is_object()) return Error{"a schema must be an object or a boolean"};
  Json merged = a;
  for (const auto& [keyword, value] : b.items()) {
    auto existing = merged.find(keyword);
    if (existing == merged.end()) {
      merged[keyword] = value;
      continue;
    }
    Json& mine = *existing;
    if (mine == value || IsJsonSchemaAnnotation(keyword)) continue;
    if (keyword == "type") {
      const std::vector<std::string> both = IntersectTypes(mine, value);
      if (both.empty()) return std::optional<Json>();
      mine = both.size() == 1 ? Json(both[0]) : Json(both);
    } else if (keyword == "required") {
      if (!mine.is_array() || !value.is_array()) return MergeError(keyword, "not arrays");
      for (const Json& name : value) {
        if (std::find(mine.begin(), mine.end(), name) == mine.end()) mine.push_back(name);
      }
    } else if (keyword == "properties") {
      if (!mine.is_object() || !value.is_object()) return MergeError(keyword, "not objects");
      for (const auto& [name, schema] : value.items()) {
        auto other = mine.find(name);
        if (other == mine.end()) {
          mine[name] = schema;
          continue;
        }
        auto both = MergeSubschemas(*other, schema, depth);
        if (!both) return both;
        if (!*both) return MergeError("properties/" + name, "no value satisfies both");
        *other = std::move(**both);
      }
    } else if (keyword == "items" || keyword == "additionalProperties") {
      auto both = MergeSubschemas(mine, value, depth);
      if (!both) return both;
      if (!*both) return MergeError(keyword, "no value satisfies both");
      mine = std::move(**both);
    } else if (keyword == "enum") {
      if (!mine.is_array() || !value.is_array()) return MergeError(keyword, "not arrays");
      Json common = Json::array();
      for (const Json& item : mine) {
        if (std::find(value.begin(), value.end(), item) != value.end()) common.push_back(item);
      }
      if (common.empty()) return std::optional<Json>();
      mine = std::move(common);
    } else if (keyword == "allOf") {  // (in subschemas; folded when they are compiled)
      if (!mine.is_array() || !value.is_array()) return MergeError(keyword, "not arrays");
      for (const Json& entry : value) mine.push_back(entry);
    } else if (keyword == "const") {
      return std::optional<Json>();  // two different constants
    } else if (IsOneOf(keyword, kLowerBounds) || IsOneOf(keyword, kUpperBounds)) {
      if (!mine.is_number() || !value.is_number()) return MergeError(keyword, "not numbers");
      const bool take_other = IsOneOf(keyword, kLowerBounds)
                                  ? value.get<double>() > mine.get<double>()
                                  : value.get<double>() < mine.get<double>();
      if (take_other) mine = value;
    } else {
      return MergeError(keyword, "different values");
    }
  }
  // Each schema's additionalProperties also governs the properties that only the other names.
  for (const auto& [owner, other] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    auto additional = owner->find("additionalProperties");
    auto named = other->find("properties");
    if (additional == owner->end() || *additional == Json(true) || named == other->end() ||
        !named->is_object()) {
      continue;
    }
    const Json no_properties = Json::object();
    const Json& owned = owner->contains("properties") ? (*owner)["properties"] : no_properties;
    for (const auto& [name, schema] : named->items()) {
      if (owned.contains(name)) continue;
      auto both = MergeSubschemas(merged["properties"][name], *additional, depth);
      if (!both) return both;
      if (*both && **both != Json(false)) {
        merged["properties"][name] = std::move(**both);
        continue;
      }
      // The property cannot appear: unsatisfiable if required, else gone.
      const Json& required = merged.contains("required") ? merged["required"] : no_properties;
      if (std::find(required.begin(), required.end(), Json(name)) != required.end()) {
        return std::optional<Json>();
      }
      merged["properties"].erase(name);
    }
  }
  // Another schema's items apply to the prefixItems too.
  if (merged.contains("prefixItems") && a.contains("prefixItems") != b.contains("prefixItems") &&
      (a.contains("prefixItems") ? b : a).contains("items")) {
    return MergeError("items", "with the other schema's prefixItems");
  }
  // A const must also be one of the enum's values.
  if (merged.contains("const") && merged.contains("enum") && merged["enum"].is_array()) {
    const Json& allowed = merged["enum"];
    if (std::find(allowed.begin(), allowed.end(), merged["const"]) == allowed.end()) {
      return std::optional<Json>();
    }
    merged.erase("enum");
  }
  return std::optional<Json>(std::move(merged));
}

Expected<std::optional<Json>> Fold(const Json& root, const Json& schema, int depth) {
  if (depth > kMaxMergeDepth) return Error{"allOf nests too deeply"};
  const Json& entries = schema["allOf"];
  if (!entries.is_array()) return Error{"`allOf` must be an array"};
  std::optional<Json> folded = schema;
  folded->erase("allOf");
  for (const Json& entry : entries) {
    const Json* resolved = &entry;
    for (int hops = 0; resolved->is_object() && resolved->contains("$ref"); ++hops) {
      if (hops > kMaxMergeDepth) return Error{"$ref chain in allOf is too long (a cycle?)"};
      const Json& ref = (*resolved)["$ref"];
      if (!ref.is_string()) return Error{"`$ref` must be a string"};
      auto target = ResolveLocalRef(root, ref.get<std::string>());
      if (!target) return Error{target.error()};
      resolved = *target;
    }
    std::optional<Json> part = *resolved;
    if (resolved->is_object() && resolved->contains("allOf")) {
      auto inner = Fold(root, *resolved, depth + 1);
      if (!inner) return inner;
      part = std::move(*inner);
    }
    if (!part) return std::optional<Json>();
    auto merged = Merge(*folded, *part, depth);
    if (!merged) return merged;
    if (!*merged) return std::optional<Json>();
    folded = std::move(*merged);
  }
  return folded;
}

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A JSON pointer token, with %XX (URI fragment encoding) decoded, then ~1 → '/' and ~0 → '~'.
std::string UnescapePointerToken(std::string_view token) {
  std::string decoded;
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '%' && i + 2 < token.size() && HexDigitValue(token[i + 1]) >= 0 &&
        HexDigitValue(token[i + 2]) >= 0) {
      decoded.push_back(
          static_cast<char>(HexDigitValue(token[i + 1]) * 16 + HexDigitValue(token[i + 2])));
      i += 2;
    } else {
      decoded.push_back(token[i]);
    }
  }
  std::string unescaped;
  for (size_t i = 0; i < decoded.size(); ++i) {
    if (decoded[i] == '~' && i + 1 < decoded.size() &&
        (decoded[i + 1] == '0' || decoded[i + 1] == '1')) {
      unescaped.push_back(decoded[i + 1] == '0' ? '~' : '/');
      ++i;
    } else {
      unescaped.push_back(decoded[i]);
    }
  }
  return unescaped;
}

}  // namespace

bool IsJsonSchemaAnnotation(std::string_view keyword) {
  static constexpr std::array<std::string_view, 22> kAnnotations = {
      "title",         "description",  "default",        "examples",         "example",
      "deprecated",    "readOnly",     "writeOnly",      "$comment",         "$schema",
      "$id",           "$anchor",      "$dynamicAnchor", "$recursiveAnchor", "$defs",
      "definitions",   "$vocabulary",  "nullable",       "contentEncoding",  "contentMediaType",
      "discriminator", "contentSchema"};
  return IsOneOf(keyword, kAnnotations);
}

Expected<const nlohmann::ordered_json*> ResolveLocalRef(const nlohmann::ordered_json& root,
                                                        std::string_view ref) {
  if (ref == "#") return &root;
  if (ref.substr(0, 2) != "#/") {
    return Error{"$ref \"" + std::string(ref) +
                 "\" is not supported: only local references (\"#\" or \"#/...\") are"};
  }
  const Json* current = &root;
  size_t start = 2;
  while (start <= ref.size()) {
    const size_t end = std::min(ref.find('/', start), ref.size());
    const std::string token = UnescapePointerToken(ref.substr(start, end - start));
    const Json* next = nullptr;
    if (current->is_object()) {
      auto found = current->find(token);
      if (found != current->end()) next = &*found;
    } else if (current->is_array() && !token.empty() &&
               token.find_first_not_of("0123456789") == std::string::npos && token.size() < 10) {
      const size_t index = std::stoul(token);
      if (index < current->size()) next = &(*current)[index];
    }
    if (next == nullptr) return Error{"$ref \"" + std::string(ref) + "\" points to nothing"};
    current = next;
    start = end + 1;
  }
  return current;
}

Expected<std::optional<nlohmann::ordered_json>> FoldAllOf(const nlohmann::ordered_json& root,
                                                          const nlohmann::ordered_json& schema) {
  return Fold(root, schema, 0);
}

}  // namespace vllm
