// JSON Schema → GBNF (see json_schema_grammar.h for what is supported).
//
// Every schema becomes a GBNF expression; an expression embedded in a larger one gets a rule of
// its own unless it is a single term, so the grammar reads as one rule per object, array,
// anyOf or referenced schema. $ref targets are compiled from a worklist, not recursively, so
// reference chains and recursive schemas cost one rule each. The JSON building blocks (any value,
// string, number, whitespace) are fixed rules, written only when used.
//
// An object with properties a (optional), b (required), c (optional) and other properties:
//
//   root      ::= "{" ws (a-member ws "," ws b-member after-b | b-member after-b) ws "}"
//   after-b   ::= (ws "," ws c-member)? (ws "," ws other-member)*
//
// The first member is any property up to the first required one; after each, the later
// properties follow in order, the optional ones each optional; other properties come last.
#include "structured_output/json_schema_grammar.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "structured_output/gbnf_text.h"
#include "structured_output/grammar.h"
#include "structured_output/json_number_grammar.h"
#include "structured_output/json_schema_merge.h"
#include "structured_output/json_string_formats.h"
#include "structured_output/literal_alternatives.h"
#include "structured_output/regex_grammar.h"

namespace vllm {
namespace {

using Json = nlohmann::ordered_json;

// Names of the fixed rules.
constexpr const char* kWs = "ws";
constexpr const char* kValue = "json-value";
constexpr const char* kObject = "json-object";
constexpr const char* kArray = "json-array";
constexpr const char* kString = "json-string";
constexpr const char* kStringTail = "json-string-tail";  // a string's characters and its end
constexpr const char* kChar = "json-char";
constexpr const char* kEscape = "json-escape";
constexpr const char* kNumber = "json-number";
constexpr const char* kInteger = "json-integer";
constexpr const char* kBoolean = "json-boolean";
constexpr const char* kNull = "json-null";

// A `"` as a GBNF literal.
constexpr const char* kQuote = "\"\\\"\"";

// Keys beyond which the additional-property key rule no longer excludes the named properties.
constexpr size_t kMaxExcludedKeyBytes = 256;
// How long a name derived from the schema may be before it is cut.
constexpr size_t kMaxRuleNameHint = 40;

// The keywords that xgrammar ignores; so do we (each occurrence is noted in the grammar).
constexpr const char* kIgnoredKeywords[] = {
    "not", "if", "then", "else", "dependentRequired", "dependentSchemas", "dependencies"};

// Keywords whose constraint cannot be enforced; vLLM refuses them with xgrammar as well.
constexpr const char* kRefusedKeywords[] = {"multipleOf",  "contains",          "minContains",
                                            "maxContains", "patternProperties", "propertyNames",
                                            "$dynamicRef", "$recursiveRef"};

std::string Dump(const Json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A JSON pointer token: '~' → "~0", '/' → "~1".
std::string PointerToken(const std::string& key) {
  std::string token;
  for (const char c : key) {
    if (c == '~') {
      token += "~0";
    } else if (c == '/') {
      token += "~1";
    } else {
      token += c;
    }
  }
  return token;
}

bool IsRuleName(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

// Whether `expression` is one term that can be embedded anywhere: a rule name, one literal or
// one character class.
bool IsSingleTerm(const std::string& expression) {
  if (IsRuleName(expression)) return true;
  if (expression.size() < 2) return false;
  const char open = expression.front();
  const char close = open == '"' ? '"' : (open == '[' ? ']' : '\0');
  if (close == '\0' || expression.back() != close) return false;
  for (size_t i = 1; i + 1 < expression.size(); ++i) {
    if (expression[i] == '\\') {
      ++i;
    } else if (expression[i] == close) {
      return false;
    }
  }
  return true;
}

bool HasOnlyAnnotationsBesides(const Json& schema, const std::string& keyword) {
  for (const auto& [key, value] : schema.items()) {
    if (key != keyword && !IsJsonSchemaAnnotation(key)) return false;
  }
  return true;
}

bool ValueMatchesType(const Json& value, const std::string& type) {
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

bool IsKnownType(const std::string& type) {
  return type == "string" || type == "number" || type == "integer" || type == "boolean" ||
         type == "null" || type == "object" || type == "array";
}

// What a keyword holding a schema or a boolean allows: nothing, or values of `schema`.
struct SubschemaOrNone {
  bool allowed = false;
  const Json* schema = nullptr;
};

class SchemaConverter {
 public:
  SchemaConverter(const Json& root, const JsonSchemaGrammarOptions& options)
      : root_(root), options_(options) {
    for (const char* name : {"root", kWs, kValue, kObject, kArray, kString, kStringTail, kChar,
                             kEscape, kNumber, kInteger, kBoolean, kNull}) {
      used_names_.insert(name);
    }
    if (options_.any_whitespace) {
      comma_ = std::string(kWs) + " \",\" " + kWs;
      colon_ = std::string(kWs) + " \":\" " + kWs;
      space_ = std::string(" ") + kWs;
    } else {
      comma_ = "\", \"";
      colon_ = "\": \"";
    }
  }

  Expected<std::string> Convert() {
    auto root_body = Visit(root_, "#", "root", 0);
    if (!root_body) return root_body;
    while (!pending_refs_.empty()) {
      const PendingRef pending = pending_refs_.front();
      pending_refs_.pop_front();
      auto body = Visit(*pending.schema, pending.path, pending.rule_name, 0);
      if (!body) return body;
      rules_.emplace_back(pending.rule_name, std::move(*body));
    }
    return Assemble(*root_body);
  }

 private:
  struct PendingRef {
    const Json* schema;
    std::string path;
    std::string rule_name;
  };

  static Error Fail(const std::string& path, const std::string& message) {
    return Error{"JSON schema at " + path + ": " + message};
  }

  void Note(const std::string& path, const std::string& message) {
    std::string note = path + ": " + message;
    for (char& c : note) {
      if (static_cast<unsigned char>(c) < 0x20) c = '?';
    }
    notes_.push_back(std::move(note));
  }

  // A fixed rule's name, marking it (and what it uses) to be written.
  std::string Use(const std::string& name) {
    if (!used_fixed_rules_.insert(name).second) return name;
    if (name == kValue) {
      for (const char* used : {kObject, kArray, kString, kNumber, kBoolean, kNull}) Use(used);
    } else if (name == kObject) {
      Use(kString), Use(kValue);
    } else if (name == kArray) {
      Use(kValue);
    } else if (name == kString) {
      Use(kStringTail);
    } else if (name == kStringTail) {
      Use(kChar);
    } else if (name == kChar) {
      Use(kEscape);
    }
    if ((name == kObject || name == kArray) && options_.any_whitespace) Use(kWs);
    return name;
  }

  // The separators, marking the whitespace rule used.
  const std::string& Comma() {
    if (options_.any_whitespace) Use(kWs);
    return comma_;
  }
  const std::string& Colon() {
    if (options_.any_whitespace) Use(kWs);
    return colon_;
  }
  // " ws" between a bracket and the content, or nothing.
  const std::string& Space() {
    if (options_.any_whitespace) Use(kWs);
    return space_;
  }

  std::string NewRuleName(const std::string& hint) {
    std::string base;
    for (const char c : hint.substr(0, kMaxRuleNameHint)) {
      base += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '-';
    }
    if (base.empty()) base = "rule";
    std::string name = base;
    for (int suffix = 2; !used_names_.insert(name).second; ++suffix) {
      name = base + "-" + std::to_string(suffix);
    }
    return name;
  }

  std::string AddRule(const std::string& hint, std::string body) {
    std::string name = NewRuleName(hint);
    rules_.emplace_back(name, std::move(body));
    return name;
  }

  // `expression` as one term: itself, or a new rule holding it.
  std::string Term(std::string expression, const std::string& hint) {
    if (IsSingleTerm(expression)) return expression;
    return AddRule(hint, std::move(expression));
  }

  Expected<std::string> Visit(const Json& schema, const std::string& path, const std::string& name,
                              int depth) {
    if (depth > kMaxJsonSchemaDepth) {
      return Fail(path,
                  "schemas nest deeper than " + std::to_string(kMaxJsonSchemaDepth) + " levels");
    }
    if (schema.is_boolean()) {
      if (schema.get<bool>()) return Use(kValue);
      return Fail(path, "the schema `false` accepts no value");
    }
    if (!schema.is_object()) return Fail(path, "a schema must be an object or a boolean");
    for (const char* keyword : kRefusedKeywords) {
      if (schema.contains(keyword)) {
        return Fail(path, "`" + std::string(keyword) + "` is not supported");
      }
    }
    if (schema.contains("uniqueItems") && schema["uniqueItems"] != Json(false)) {
      return Fail(path, "`uniqueItems` is not supported");
    }
    for (const char* keyword : kIgnoredKeywords) {
      if (schema.contains(keyword)) Note(path, "`" + std::string(keyword) + "` is ignored");
    }
    if (schema.contains("$ref")) return VisitRef(schema, path);
    if (schema.contains("allOf")) {
      // One entry and only annotations beside it (pydantic's described $ref): the entry itself,
      // so that a $ref keeps its own (possibly recursive) rule instead of being inlined.
      const Json& entries = schema["allOf"];
      if (entries.is_array() && entries.size() == 1 && HasOnlyAnnotationsBesides(schema, "allOf")) {
        return Visit(entries[0], path + "/allOf/0", name, depth + 1);
      }
      auto folded = FoldAllOf(root_, schema);
      if (!folded) return Fail(path + "/allOf", folded.error());
      if (!*folded) return Fail(path + "/allOf", "no value satisfies every schema");
      return Visit(**folded, path, name, depth + 1);
    }
    if (schema.contains("anyOf") || schema.contains("oneOf")) {
      return VisitAnyOf(schema, path, name, depth);
    }
    auto types = TypesOf(schema, path);
    if (!types) return Error{types.error()};
    if (schema.contains("const")) return ConstExpression(schema, *types, path);
    if (schema.contains("enum")) return EnumExpression(schema, *types, path, name);
    if (types->empty()) return Use(kValue);
    if (types->size() == 1) return VisitTyped(schema, types->front(), path, name, depth);
    std::string alternatives;
    for (const std::string& type : *types) {
      auto expression = VisitTyped(schema, type, path, name + "-" + type, depth);
      if (!expression) return expression;
      if (!alternatives.empty()) alternatives += " | ";
      alternatives += Term(std::move(*expression), name + "-" + type);
    }
    return alternatives;
  }

  // The types the schema allows; empty for any JSON value. Without `type`, an object or array
  // is inferred from their keywords, as xgrammar does.
  Expected<std::vector<std::string>> TypesOf(const Json& schema, const std::string& path) {
    auto type = schema.find("type");
    if (type == schema.end()) {
      for (const char* keyword : {"properties", "additionalProperties", "unevaluatedProperties"}) {
        if (schema.contains(keyword)) return std::vector<std::string>{"object"};
      }
      for (const char* keyword : {"items", "prefixItems", "unevaluatedItems"}) {
        if (schema.contains(keyword)) return std::vector<std::string>{"array"};
      }
      return std::vector<std::string>{};
    }
    std::vector<std::string> types;
    if (type->is_string()) {
      types.push_back(type->get<std::string>());
    } else if (type->is_array() && std::all_of(type->begin(), type->end(),
                                               [](const Json& item) { return item.is_string(); })) {
      for (const Json& item : *type) {
        if (std::find(types.begin(), types.end(), item.get<std::string>()) == types.end()) {
          types.push_back(item.get<std::string>());
        }
      }
    }
    if (types.empty()) {
      return Fail(path + "/type", "`type` must be a type name or a non-empty array of them");
    }
    for (const std::string& name : types) {
      if (!IsKnownType(name)) return Fail(path + "/type", "unknown type \"" + name + "\"");
    }
    return types;
  }

  Expected<std::string> VisitTyped(const Json& schema, const std::string& type,
                                   const std::string& path, const std::string& name, int depth) {
    if (type == "string") return StringExpression(schema, path, name);
    if (type == "integer" || type == "number") return NumberExpression(schema, type, path);
    if (type == "boolean") return Use(kBoolean);
    if (type == "null") return Use(kNull);
    if (type == "object") return ObjectExpression(schema, path, name, depth);
    return ArrayExpression(schema, path, name, depth);
  }

  Expected<std::string> VisitRef(const Json& schema, const std::string& path) {
    const Json& ref = schema["$ref"];
    if (!ref.is_string()) return Fail(path + "/$ref", "`$ref` must be a string");
    for (const auto& [keyword, value] : schema.items()) {
      if (keyword != "$ref" && !IsJsonSchemaAnnotation(keyword)) {
        Note(path, "`" + keyword + "` beside `$ref` is ignored");
      }
    }
    const std::string target = ref.get<std::string>();
    if (target == "#") return std::string("root");
    if (auto known = ref_rules_.find(target); known != ref_rules_.end()) return known->second;
    auto resolved = ResolveLocalRef(root_, target);
    if (!resolved) return Fail(path + "/$ref", resolved.error());
    const std::string rule_name = NewRuleName(target.substr(target.rfind('/') + 1));
    ref_rules_[target] = rule_name;
    pending_refs_.push_back({*resolved, target, rule_name});
    return rule_name;
  }

  Expected<std::string> VisitAnyOf(const Json& schema, const std::string& path,
                                   const std::string& name, int depth) {
    if (schema.contains("anyOf") && schema.contains("oneOf")) {
      return Fail(path, "`anyOf` together with `oneOf` is not supported");
    }
    const std::string keyword = schema.contains("anyOf") ? "anyOf" : "oneOf";
    const Json& options = schema[keyword];
    if (!options.is_array() || options.empty()) {
      return Fail(path + "/" + keyword, "`" + keyword + "` must be a non-empty array");
    }
    Json siblings = Json::object();
    for (const auto& [sibling, value] : schema.items()) {
      if (sibling != keyword && !IsJsonSchemaAnnotation(sibling)) siblings[sibling] = value;
    }
    std::string alternatives;
    for (size_t i = 0; i < options.size(); ++i) {
      const std::string option_path = path + "/" + keyword + "/" + std::to_string(i);
      const std::string option_name = name + "-" + std::to_string(i);
      Expected<std::string> expression = std::string();
      if (siblings.empty()) {
        expression = Visit(options[i], option_path, option_name, depth + 1);
      } else {
        // The keywords beside anyOf apply to every option: folded into each as an allOf.
        Json combined = siblings;
        Json entries = Json::array({options[i]});
        if (combined.contains("allOf") && combined["allOf"].is_array()) {
          for (const Json& entry : combined["allOf"]) entries.push_back(entry);
        }
        combined["allOf"] = std::move(entries);
        auto merged = FoldAllOf(root_, combined);
        if (!merged) return Fail(option_path, merged.error());
        if (!*merged) continue;  // no value satisfies this option and the keywords beside it
        expression = Visit(**merged, option_path, option_name, depth + 1);
      }
      if (!expression) return expression;
      if (!alternatives.empty()) alternatives += " | ";
      alternatives += Term(std::move(*expression), option_name);
    }
    if (alternatives.empty()) {
      return Fail(path, "no `" + keyword + "` option agrees with the keywords beside it");
    }
    return alternatives;
  }

  Expected<std::string> ConstExpression(const Json& schema, const std::vector<std::string>& types,
                                        const std::string& path) {
    const Json& value = schema["const"];
    if (!types.empty() && std::none_of(types.begin(), types.end(), [&](const std::string& type) {
          return ValueMatchesType(value, type);
        })) {
      return Fail(path + "/const", "the constant does not match `type`");
    }
    return GbnfLiteral(Dump(value));
  }

  Expected<std::string> EnumExpression(const Json& schema, const std::vector<std::string>& types,
                                       const std::string& path, const std::string& name) {
    const Json& values = schema["enum"];
    if (!values.is_array() || values.empty()) {
      return Fail(path + "/enum", "`enum` must be a non-empty array");
    }
    std::vector<std::string> texts;
    for (const Json& value : values) {
      if (types.empty() || std::any_of(types.begin(), types.end(), [&](const std::string& type) {
            return ValueMatchesType(value, type);
          })) {
        texts.push_back(Dump(value));
      }
    }
    if (texts.empty()) return Fail(path + "/enum", "no value of `enum` matches `type`");
    return LiteralAlternatives(
        std::move(texts), [&]() { return NewRuleName(name + "-enum"); }, &rules_);
  }

  // A keyword holding a non-negative integer count (saturated at 2^62), or nullopt when absent.
  static Expected<std::optional<int64_t>> CountKeyword(const Json& schema,
                                                       const std::string& keyword,
                                                       const std::string& path) {
    constexpr int64_t kSaturated = int64_t{1} << 62;
    auto found = schema.find(keyword);
    if (found == schema.end()) return std::optional<int64_t>();
    if (found->is_number_unsigned()) {
      return std::optional<int64_t>(std::min<uint64_t>(found->get<uint64_t>(), kSaturated));
    }
    if (found->is_number_integer() && found->get<int64_t>() >= 0) {
      return std::optional<int64_t>(found->get<int64_t>());
    }
    if (found->is_number_float()) {
      const double count = found->get<double>();
      if (std::isfinite(count) && count >= 0 && std::floor(count) == count) {
        return std::optional<int64_t>(static_cast<int64_t>(std::min<double>(count, kSaturated)));
      }
    }
    return Fail(path + "/" + keyword, "`" + keyword + "` must be a non-negative integer");
  }

  // The minimum and maximum count keywords of a schema, checked to be in order.
  Expected<std::pair<int64_t, std::optional<int64_t>>> CountRange(const Json& schema,
                                                                  const std::string& min_keyword,
                                                                  const std::string& max_keyword,
                                                                  const std::string& path) {
    auto min_count = CountKeyword(schema, min_keyword, path);
    if (!min_count) return Error{min_count.error()};
    auto max_count = CountKeyword(schema, max_keyword, path);
    if (!max_count) return Error{max_count.error()};
    if (*max_count && min_count->value_or(0) > **max_count) {
      return Fail(path, "`" + min_keyword + "` is greater than `" + max_keyword + "`");
    }
    return std::make_pair(min_count->value_or(0), *max_count);
  }

  // `item` repeated min_count to max_count times (max_count absent: unbounded), as GBNF. A
  // maximum above kMaxCountedRepetition is not enforced (noted); a minimum above it is an Error.
  Expected<std::string> Repeat(const std::string& item, int64_t min_count,
                               std::optional<int64_t> max_count, const std::string& path,
                               const std::string& what) {
    if (min_count > kMaxCountedRepetition) {
      return Fail(path, what + " minimum " + std::to_string(min_count) + " is above " +
                            std::to_string(kMaxCountedRepetition) + ", the most supported");
    }
    if (max_count && *max_count > kMaxCountedRepetition) {
      Note(path, what + " maximum " + std::to_string(*max_count) + " is above " +
                     std::to_string(kMaxCountedRepetition) + " and is not enforced");
      max_count.reset();
    }
    if (max_count && *max_count == 0) return std::string();
    const std::string base = IsSingleTerm(item) ? item : "(" + item + ")";
    if (!max_count) {
      if (min_count == 0) return base + "*";
      if (min_count == 1) return base + "+";
      return base + "{" + std::to_string(min_count) + ",}";
    }
    if (min_count == 1 && *max_count == 1) return item;
    if (min_count == 0 && *max_count == 1) return base + "?";
    if (min_count == *max_count) return base + "{" + std::to_string(min_count) + "}";
    return base + "{" + std::to_string(min_count) + "," + std::to_string(*max_count) + "}";
  }

  Expected<std::string> StringExpression(const Json& schema, const std::string& path,
                                         const std::string& name) {
    const bool has_length = schema.contains("minLength") || schema.contains("maxLength");
    const bool has_pattern = schema.contains("pattern");
    const bool has_format = schema.contains("format");
    if (has_pattern && has_format) {
      return Fail(path, "`pattern` together with `format` is not supported");
    }
    if ((has_pattern || has_format) && has_length) {
      return Fail(path, "`minLength` / `maxLength` together with `" +
                            std::string(has_pattern ? "pattern" : "format") + "` is not supported");
    }
    if (has_pattern || has_format) {
      const std::string keyword = has_pattern ? "pattern" : "format";
      const Json& value = schema[keyword];
      if (!value.is_string()) return Fail(path + "/" + keyword, "must be a string");
      std::string regex = value.get<std::string>();
      if (has_format) {
        std::optional<std::string> format_regex = JsonStringFormatRegex(regex);
        if (!format_regex) {
          return Fail(path + "/format", "format \"" + regex + "\" is not supported");
        }
        regex = std::move(*format_regex);
      }
      auto body = RegexToGbnfExpression(regex, RegexTextForm::kJsonStringBody);
      if (!body) return Fail(path + "/" + keyword, body.error());
      return std::string(kQuote) + " " + Term(std::move(*body), name + "-" + keyword) + " " +
             kQuote;
    }
    if (!has_length) return Use(kString);
    auto range = CountRange(schema, "minLength", "maxLength", path);
    if (!range) return Error{range.error()};
    auto characters = Repeat(Use(kChar), range->first, range->second, path, "string length");
    if (!characters) return characters;
    return std::string(kQuote) + (characters->empty() ? "" : " " + *characters) + " " + kQuote;
  }

  // A number keyword's value as a bound, or an Error naming it.
  static Expected<NumberBound> BoundOf(const Json& value, bool exclusive, const std::string& path) {
    auto decimal = DecimalFromJson(value);
    if (!decimal) return Fail(path, decimal.error());
    return NumberBound{std::move(*decimal), exclusive};
  }

  // The tighter of the inclusive (`inclusive_keyword`) and exclusive bounds on one side. Draft
  // 4's boolean exclusiveMinimum / exclusiveMaximum make the inclusive bound exclusive.
  static Expected<std::optional<NumberBound>> SideBound(const Json& schema,
                                                        const std::string& inclusive_keyword,
                                                        const std::string& exclusive_keyword,
                                                        bool is_lower, const std::string& path) {
    std::optional<NumberBound> bound;
    const Json* exclusive =
        schema.contains(exclusive_keyword) ? &schema[exclusive_keyword] : nullptr;
    const bool draft4_exclusive =
        exclusive != nullptr && exclusive->is_boolean() && exclusive->get<bool>();
    if (schema.contains(inclusive_keyword)) {
      auto parsed =
          BoundOf(schema[inclusive_keyword], draft4_exclusive, path + "/" + inclusive_keyword);
      if (!parsed) return Error{parsed.error()};
      bound = std::move(*parsed);
    }
    if (exclusive != nullptr && !exclusive->is_boolean()) {
      auto parsed = BoundOf(*exclusive, true, path + "/" + exclusive_keyword);
      if (!parsed) return Error{parsed.error()};
      const double candidate = exclusive->get<double>();
      const bool tighter =
          !bound || (is_lower ? candidate >= schema[inclusive_keyword].get<double>()
                              : candidate <= schema[inclusive_keyword].get<double>());
      if (tighter) bound = std::move(*parsed);
    }
    return bound;
  }

  Expected<std::string> NumberExpression(const Json& schema, const std::string& type,
                                         const std::string& path) {
    auto minimum = SideBound(schema, "minimum", "exclusiveMinimum", true, path);
    if (!minimum) return Error{minimum.error()};
    auto maximum = SideBound(schema, "maximum", "exclusiveMaximum", false, path);
    if (!maximum) return Error{maximum.error()};
    if (!*minimum && !*maximum) return Use(type == "integer" ? kInteger : kNumber);
    auto range = type == "integer" ? IntegerRangeGbnf(*minimum, *maximum)
                                   : NumberRangeGbnf(*minimum, *maximum);
    if (!range) return Fail(path, range.error());
    return range;
  }

  // What additionalProperties (or, in its absence, unevaluatedProperties) allows.
  Expected<SubschemaOrNone> AdditionalProperties(const Json& schema, const std::string& path) {
    for (const char* keyword : {"additionalProperties", "unevaluatedProperties"}) {
      auto found = schema.find(keyword);
      if (found == schema.end()) continue;
      if (found->is_boolean()) return SubschemaOrNone{found->get<bool>(), &kAnything};
      if (found->is_object()) return SubschemaOrNone{true, &*found};
      return Fail(path + "/" + keyword, "must be a schema or a boolean");
    }
    if (options_.disallow_additional_properties) return SubschemaOrNone{};
    if (options_.strict && schema.contains("properties")) return SubschemaOrNone{};
    return SubschemaOrNone{true, &kAnything};
  }

  Expected<std::string> ObjectExpression(const Json& schema, const std::string& path,
                                         const std::string& name, int depth) {
    struct Property {
      std::string key;
      const Json* schema;
      std::string schema_path;
      bool required;
    };
    std::vector<Property> properties;
    std::set<std::string> named;
    if (schema.contains("properties")) {
      const Json& listed = schema["properties"];
      if (!listed.is_object()) return Fail(path + "/properties", "must be an object");
      for (const auto& [key, value] : listed.items()) {
        properties.push_back({key, &value, path + "/properties/" + PointerToken(key), false});
        named.insert(key);
      }
    }
    auto additional = AdditionalProperties(schema, path);
    if (!additional) return Error{additional.error()};
    if (schema.contains("required")) {
      const Json& required = schema["required"];
      if (!required.is_array()) return Fail(path + "/required", "must be an array of names");
      for (const Json& key : required) {
        if (!key.is_string()) return Fail(path + "/required", "must be an array of names");
        const std::string& key_text = key.get_ref<const std::string&>();
        auto listed = std::find_if(properties.begin(), properties.end(),
                                   [&](const Property& p) { return p.key == key_text; });
        if (listed != properties.end()) {
          listed->required = true;
        } else if (additional->allowed) {
          // Required but not listed: an additional property that must be present.
          properties.push_back(
              {key_text, additional->schema, path + "/additionalProperties", true});
          named.insert(key_text);
        } else {
          return Fail(path + "/required", "required property \"" + key_text +
                                              "\" is not in `properties` and no other "
                                              "properties are allowed");
        }
      }
    }
    const auto num_required = static_cast<int64_t>(std::count_if(
        properties.begin(), properties.end(), [](const Property& p) { return p.required; }));
    auto property_counts = CountRange(schema, "minProperties", "maxProperties", path);
    if (!property_counts) return Error{property_counts.error()};
    if (property_counts->first > num_required) {
      return Fail(path + "/minProperties",
                  "`minProperties` above the number of required properties is not supported");
    }
    if (property_counts->second &&
        (additional->allowed ||
         *property_counts->second < static_cast<int64_t>(properties.size()))) {
      return Fail(path + "/maxProperties",
                  "`maxProperties` below the number of possible properties is not supported");
    }

    // "key": value for each property, and for the other properties.
    std::vector<std::string> members;
    for (const Property& property : properties) {
      auto value =
          Visit(*property.schema, property.schema_path, name + "-" + property.key, depth + 1);
      if (!value) return value;
      members.push_back(GbnfLiteral(Dump(Json(property.key))) + " " + Colon() + " " +
                        Term(std::move(*value), name + "-" + property.key));
    }
    std::string other_member;
    if (additional->allowed) {
      auto value = Visit(*additional->schema, path + "/additionalProperties", name + "-additional",
                         depth + 1);
      if (!value) return value;
      other_member = Term(OtherKey(named, path, name) + " " + Colon() + " " +
                              Term(std::move(*value), name + "-additional-value"),
                          name + "-additional");
    }
    const std::string open = "\"{\"" + Space();
    const std::string close = Space() + " \"}\"";
    if (members.empty() && other_member.empty()) return open + " \"}\"";

    // The member lists, first member first (see the diagram at the top of the file).
    const std::string others =
        other_member.empty() ? "" : "(" + Comma() + " " + other_member + ")*";
    const size_t num_properties = members.size();
    size_t last_first = num_properties == 0 ? 0 : num_properties - 1;  // the last possible first
    for (size_t i = 0; i < num_properties; ++i) {
      if (properties[i].required) {
        last_first = i;
        break;
      }
    }
    // after[i]: what follows property i (as the last one written so far).
    std::vector<std::string> after(num_properties);
    if (num_properties > 0) {
      std::string tail = others;
      for (size_t k = num_properties - 1; k > last_first; --k) {
        std::string piece = Comma() + " " + members[k];
        tail = (properties[k].required ? piece : "(" + piece + ")?") +
               (tail.empty() ? "" : " " + tail);
      }
      after[last_first] = (tail.empty() || last_first == 0)
                              ? tail
                              : Term(tail, name + "-after-" + std::to_string(last_first));
      for (size_t k = last_first; k-- > 0;) {
        std::string piece = Comma() + " " + members[k + 1];
        std::string body = (properties[k + 1].required ? piece : "(" + piece + ")?") +
                           (after[k + 1].empty() ? "" : " " + after[k + 1]);
        after[k] = k == 0 ? body : AddRule(name + "-after-" + std::to_string(k), body);
      }
    }
    std::vector<std::string> firsts;
    for (size_t i = 0; i < num_properties && i <= last_first; ++i) {
      firsts.push_back(members[i] + (after[i].empty() ? "" : " " + after[i]));
    }
    const bool may_be_empty = num_required == 0;
    if (may_be_empty && !other_member.empty()) {
      firsts.push_back(other_member + (others.empty() ? "" : " " + others));
    }
    std::string content;
    for (const std::string& first : firsts) {
      if (!content.empty()) content += " | ";
      content += first;
    }
    if (firsts.size() > 1) content = "(" + content + ")";
    if (may_be_empty) return open + " (" + content + Space() + ")? \"}\"";
    return open + " " + content + close;
  }

  // The key of an additional property: any string but the named properties' keys (when they
  // are few and need no escapes; otherwise any string, noted).
  std::string OtherKey(const std::set<std::string>& named, const std::string& path,
                       const std::string& name) {
    if (named.empty()) return Use(kString);
    size_t total_bytes = 0;
    bool needs_escapes = false;
    for (const std::string& key : named) {
      total_bytes += key.size();
      needs_escapes = needs_escapes || std::any_of(key.begin(), key.end(), [](char c) {
                        return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
                      });
    }
    if (total_bytes > kMaxExcludedKeyBytes || needs_escapes) {
      Note(path, "additional property keys may repeat a named property's key");
      return Use(kString);
    }
    std::vector<std::u32string> keys;
    for (const std::string& key : named) keys.push_back(DecodeUtf8(key).value_or(U""));
    return std::string(kQuote) + " " + KeyTrieRule(keys, U"", name + "-other-key");
  }

  // A rule for the rest of a key (after `prefix`) such that the whole key is none of `keys`,
  // followed by the closing quote.
  std::string KeyTrieRule(const std::vector<std::u32string>& keys, const std::u32string& prefix,
                          const std::string& hint) {
    bool prefix_is_key = false;
    std::set<char32_t> next_code_points;
    for (const std::u32string& key : keys) {
      if (key.compare(0, prefix.size(), prefix) != 0) continue;
      if (key.size() == prefix.size()) {
        prefix_is_key = true;
      } else {
        next_code_points.insert(key[prefix.size()]);
      }
    }
    const std::string rule_name = NewRuleName(hint);
    // The key may end here unless it would be a named one; it may go on with an escape or a
    // character that leaves every named key; or follow a named key one character further.
    std::string body = prefix_is_key ? "" : std::string(kQuote) + " | ";
    CodePointSet leaving = CodePointSet::All().Minus(CodePointSet::Range(0, 0x1F));
    leaving = leaving.Minus(CodePointSet::Of('"')).Minus(CodePointSet::Of('\\'));
    for (const char32_t code_point : next_code_points) {
      leaving = leaving.Minus(CodePointSet::Of(code_point));
    }
    if (!leaving.empty()) body += GbnfCharClass(leaving) + " " + Use(kStringTail) + " | ";
    body += Use(kEscape) + " " + Use(kStringTail);
    for (const char32_t code_point : next_code_points) {
      std::string text;
      AppendUtf8(code_point, &text);
      body += " | " + GbnfLiteral(text) + " " + KeyTrieRule(keys, prefix + code_point, hint);
    }
    rules_.emplace_back(rule_name, std::move(body));
    return rule_name;
  }

  Expected<std::string> ArrayExpression(const Json& schema, const std::string& path,
                                        const std::string& name, int depth) {
    // Tuple items: prefixItems, or draft 4-2019's array-valued items.
    std::vector<std::pair<const Json*, std::string>> prefix;
    const Json* tuple = nullptr;
    std::string tuple_keyword;
    if (schema.contains("prefixItems")) {
      tuple = &schema["prefixItems"];
      tuple_keyword = "prefixItems";
    } else if (schema.contains("items") && schema["items"].is_array()) {
      tuple = &schema["items"];
      tuple_keyword = "items";
    }
    if (tuple != nullptr) {
      if (!tuple->is_array()) {
        return Fail(path + "/" + tuple_keyword, "must be an array of schemas");
      }
      for (size_t i = 0; i < tuple->size(); ++i) {
        prefix.emplace_back(&(*tuple)[i], path + "/" + tuple_keyword + "/" + std::to_string(i));
      }
    }
    // The schema of the items after the tuple, if any are allowed.
    SubschemaOrNone rest{true, &kAnything};
    const char* rest_keyword = tuple_keyword == "items" ? "additionalItems" : "items";
    const Json* rest_value = schema.contains(rest_keyword)         ? &schema[rest_keyword]
                             : schema.contains("unevaluatedItems") ? &schema["unevaluatedItems"]
                                                                   : nullptr;
    if (rest_value != nullptr) {
      if (rest_value->is_boolean()) {
        rest = {rest_value->get<bool>(), &kAnything};
      } else if (rest_value->is_object()) {
        rest = {true, rest_value};
      } else {
        return Fail(path + "/" + rest_keyword, "must be a schema or a boolean");
      }
    } else if (!prefix.empty() && options_.strict) {
      rest = {};
    }
    auto counts = CountRange(schema, "minItems", "maxItems", path);
    if (!counts) return Error{counts.error()};
    const auto [min_items, max_items] = *counts;
    const auto num_prefix = static_cast<int64_t>(prefix.size());
    if (max_items && *max_items < num_prefix) {
      return Fail(path, "`maxItems` is below the number of prefixItems (all are required)");
    }
    if (!rest.allowed && min_items > num_prefix) {
      return Fail(path,
                  "`minItems` is above the number of prefixItems and no other items are "
                  "allowed");
    }

    std::string items;
    for (size_t i = 0; i < prefix.size(); ++i) {
      auto item =
          Visit(*prefix[i].first, prefix[i].second, name + "-" + std::to_string(i), depth + 1);
      if (!item) return item;
      if (!items.empty()) items += " " + Comma() + " ";
      items += Term(std::move(*item), name + "-" + std::to_string(i));
    }
    const std::string open = "\"[\"" + Space();
    const std::string close = Space() + " \"]\"";
    if (rest.allowed && max_items != num_prefix) {
      auto item = Visit(*rest.schema, path + "/" + rest_keyword, name + "-item", depth + 1);
      if (!item) return item;
      const std::string item_term = Term(std::move(*item), name + "-item");
      const std::string next_item = Comma() + " " + item_term;
      if (prefix.empty()) {
        std::optional<int64_t> max_more;
        if (max_items) max_more = *max_items - 1;
        auto more =
            Repeat(next_item, std::max<int64_t>(min_items - 1, 0), max_more, path, "item count");
        if (!more) return more;
        const std::string listed = item_term + (more->empty() ? "" : " " + *more);
        if (min_items == 0) return open + " (" + listed + Space() + ")? \"]\"";
        return open + " " + listed + close;
      }
      std::optional<int64_t> max_more;
      if (max_items) max_more = *max_items - num_prefix;
      auto more = Repeat(next_item, std::max<int64_t>(min_items - num_prefix, 0), max_more, path,
                         "item count");
      if (!more) return more;
      if (!more->empty()) items += " " + *more;
    }
    if (items.empty()) return open + " \"]\"";
    return open + " " + items + close;
  }

  std::string FixedRule(const std::string& name) const {
    if (name == kWs) {
      return "[ \\n\\t]{0," + std::to_string(std::max(1, options_.max_whitespace_run)) + "}";
    }
    if (name == kValue) {
      return std::string(kObject) + " | " + kArray + " | " + kString + " | " + kNumber + " | " +
             kBoolean + " | " + kNull;
    }
    if (name == kObject) {
      const std::string member = std::string(kString) + " " + colon_ + " " + kValue;
      return "\"{\"" + space_ + " (" + member + " (" + comma_ + " " + member + ")*" + space_ +
             ")? \"}\"";
    }
    if (name == kArray) {
      return "\"[\"" + space_ + " (" + kValue + " (" + comma_ + " " + kValue + ")*" + space_ +
             ")? \"]\"";
    }
    if (name == kString) return std::string(kQuote) + " " + kStringTail;
    if (name == kStringTail) return std::string(kChar) + "* " + kQuote;
    if (name == kChar) return std::string(R"([^\"\\\x00-\x1F] | )") + kEscape;
    if (name == kEscape) return R"("\\" ([\"\\/bfnrt] | "u" [0-9a-fA-F]{4}))";
    if (name == kNumber) return *NumberRangeGbnf(std::nullopt, std::nullopt);
    if (name == kInteger) return *IntegerRangeGbnf(std::nullopt, std::nullopt);
    if (name == kBoolean) return "\"true\" | \"false\"";
    return "\"null\"";  // kNull
  }

  Expected<std::string> Assemble(const std::string& root_body) const {
    std::string text = "# JSON Schema grammar";
    if (options_.any_whitespace) {
      text += "; whitespace between tokens: at most " +
              std::to_string(std::max(1, options_.max_whitespace_run)) + " of [ \\n\\t]";
    } else {
      text += "; one line, \", \" and \": \" separators";
    }
    text += "\n";
    for (const std::string& note : notes_) text += "# " + note + "\n";
    text += "root ::= " + root_body + "\n";
    for (const auto& [name, body] : rules_) text += name + " ::= " + body + "\n";
    for (const char* name : {kValue, kObject, kArray, kString, kStringTail, kChar, kEscape, kNumber,
                             kInteger, kBoolean, kNull, kWs}) {
      if (used_fixed_rules_.count(name)) {
        text += std::string(name) + " ::= " + FixedRule(name) + "\n";
      }
    }
    const size_t max_bytes = GrammarLimits{}.max_grammar_bytes;
    if (text.size() > max_bytes) {
      return Error{"JSON schema: the grammar would be " + std::to_string(text.size()) +
                   " bytes, more than the " + std::to_string(max_bytes) + " allowed"};
    }
    return text;
  }

  static inline const Json kAnything = true;

  const Json& root_;
  JsonSchemaGrammarOptions options_;
  std::string comma_;
  std::string colon_;
  std::string space_;
  std::set<std::string> used_names_;
  std::set<std::string> used_fixed_rules_;
  std::vector<std::pair<std::string, std::string>> rules_;  // name, body; in order of creation
  std::map<std::string, std::string> ref_rules_;            // $ref → rule name
  std::deque<PendingRef> pending_refs_;
  std::vector<std::string> notes_;
};

}  // namespace

Expected<std::string> JsonSchemaToGbnf(const nlohmann::ordered_json& schema,
                                       const JsonSchemaGrammarOptions& options) {
  return SchemaConverter(schema, options).Convert();
}

}  // namespace vllm
