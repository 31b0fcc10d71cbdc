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
#include <charconv>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "structured_output/compile_deadline.h"
#include "structured_output/gbnf_text.h"
#include "structured_output/grammar.h"
#include "structured_output/json_number_grammar.h"
#include "structured_output/json_schema_merge.h"
#include "structured_output/json_schema_value_check.h"
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

// The keywords of `schema` other than `keyword` and the annotations.
Json KeywordsBesides(const Json& schema, const std::string& keyword) {
  Json siblings = Json::object();
  for (const auto& [sibling, value] : schema.items()) {
    if (sibling != keyword && !IsJsonSchemaAnnotation(sibling)) siblings[sibling] = value;
  }
  return siblings;
}

// `schema` with `entry` first in its allOf (one made when it has none).
Json AllOfWith(Json schema, const Json& entry) {
  Json entries = Json::array({entry});
  if (auto others = schema.find("allOf"); others != schema.end()) {
    if (others->is_array()) {
      for (const Json& other : *others) entries.push_back(other);
    } else {
      entries.push_back(*others);  // (refused as a schema when folded)
    }
  }
  schema["allOf"] = std::move(entries);
  return schema;
}

bool HasOnlyAnnotationsBesides(const Json& schema, const std::string& keyword) {
  for (const auto& [key, value] : schema.items()) {
    if (key != keyword && !IsJsonSchemaAnnotation(key)) return false;
  }
  return true;
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
    if (options_.any_whitespace && !options_.whitespace_pattern.empty()) {
      auto pattern = RegexToGbnfExpression(options_.whitespace_pattern, RegexTextForm::kRaw);
      if (!pattern) return Error{"whitespace_pattern: " + pattern.error()};
      whitespace_ = std::move(*pattern);
    }
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
    // The next suffix to try is remembered per base, so n rules of one base (an enum's trie)
    // cost n tries, not n^2 / 2.
    std::string name = base;
    for (int& suffix = next_suffix_.try_emplace(base, 2).first->second;
         !used_names_.insert(name).second; ++suffix) {
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
    if (CompileInterrupted()) return Error{"compile interrupted"};  // the compiler reports it
    if (depth > kMaxJsonSchemaDepth) {
      return Fail(path,
                  "schemas nest deeper than " + std::to_string(kMaxJsonSchemaDepth) + " levels");
    }
    if (schema.is_boolean()) {
      if (schema.get<bool>()) return Use(kValue);
      return Fail(path, "the schema `false` accepts no value");
    }
    if (!schema.is_object()) return Fail(path, "a schema must be an object or a boolean");
    if (schema.contains("$ref")) return VisitRef(schema, path);
    // The listed values, each checked against the rest of the schema (allOf, anyOf, oneOf and
    // uniqueItems included, exactly; what cannot be checked is refused there).
    if (schema.contains("const") || schema.contains("enum")) {
      return EnumExpression(schema, path, name);
    }
    for (const char* keyword : kRefusedKeywords) {
      if (schema.contains(keyword)) {
        return Fail(path, "`" + std::string(keyword) + "` is not supported");
      }
    }
    if (schema.contains("uniqueItems") && schema["uniqueItems"] != Json(false)) {
      return Fail(path, "`uniqueItems` is not supported");
    }
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
    if (schema.contains("if") && (schema.contains("then") || schema.contains("else"))) {
      return Fail(path + "/if",
                  "`if` with `then` / `else` is supported only beside `enum` or `const`");
    }
    if (schema.contains("not")) {
      auto allowed = TypesNotIn(*types, schema["not"], path + "/not");
      if (!allowed) return Error{allowed.error()};
      *types = std::move(*allowed);
    }
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

  // The types the schema allows; empty for any JSON value. Without `type`, the types whose
  // keywords the schema uses (as xgrammar infers an object from `properties`), so that no
  // keyword goes unenforced.
  Expected<std::vector<std::string>> TypesOf(const Json& schema, const std::string& path) {
    auto type = schema.find("type");
    if (type == schema.end()) {
      std::vector<std::string> inferred;
      for (const char* candidate : {"object", "array", "string", "number"}) {
        for (const auto& [keyword, value] : schema.items()) {
          const char* keyword_type = JsonSchemaKeywordType(keyword);
          if (keyword_type != nullptr && std::string(keyword_type) == candidate) {
            inferred.push_back(candidate);
            break;
          }
        }
      }
      return inferred;
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

  // `types` (empty: every type) less those that a `not` holding only `type` excludes; other
  // `not` schemas are refused (beside enum / const they are checked value by value).
  Expected<std::vector<std::string>> TypesNotIn(const std::vector<std::string>& types,
                                                const Json& not_schema, const std::string& path) {
    if (!not_schema.is_object() || !not_schema.contains("type") ||
        !HasOnlyAnnotationsBesides(not_schema, "type")) {
      return Fail(path, "`not` is supported only beside `enum` or `const`, or holding only `type`");
    }
    auto excluded = TypesOf(not_schema, path);
    if (!excluded) return excluded;
    auto is_excluded = [&](const std::string& type) {
      return std::find(excluded->begin(), excluded->end(), type) != excluded->end() ||
             (type == "integer" &&
              std::find(excluded->begin(), excluded->end(), "number") != excluded->end());
    };
    std::vector<std::string> allowed;
    const std::vector<std::string> every_type = {"object", "array",   "string",
                                                 "number", "boolean", "null"};
    for (const std::string& type : types.empty() ? every_type : types) {
      if (type == "number" && is_excluded("integer") && !is_excluded("number")) {
        return Fail(path, "excluding integers from numbers is not supported");
      }
      if (!is_excluded(type)) allowed.push_back(type);
    }
    if (allowed.empty()) return Fail(path, "`not` excludes every type the schema allows");
    return allowed;
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
    const std::string target = ref.get<std::string>();
    // Keywords beside a $ref apply with it (2019-09 and later): an allOf of the two, one rule
    // per target and keywords, so that a recursive schema still costs one rule.
    const Json siblings = KeywordsBesides(schema, "$ref");
    if (siblings.empty() && target == "#") return std::string("root");
    const std::string key = siblings.empty() ? target : Dump(Json::array({target, siblings}));
    if (auto known = ref_rules_.find(key); known != ref_rules_.end()) return known->second;
    const Json* referenced = nullptr;
    if (siblings.empty()) {
      auto resolved = ResolveLocalRef(root_, target);
      if (!resolved) return Fail(path + "/$ref", resolved.error());
      referenced = *resolved;
    } else {
      auto folded = FoldAllOf(root_, AllOfWith(siblings, Json{{"$ref", target}}));
      if (!folded) return Fail(path, folded.error());
      if (!*folded) return Fail(path, "no value satisfies the `$ref` and the keywords beside it");
      referenced = &owned_schemas_.emplace_back(std::move(**folded));
    }
    const std::string rule_name = NewRuleName(target.substr(target.rfind('/') + 1));
    ref_rules_[key] = rule_name;
    pending_refs_.push_back({referenced, siblings.empty() ? target : path, rule_name});
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
    const Json siblings = KeywordsBesides(schema, keyword);
    std::string alternatives;
    for (size_t i = 0; i < options.size(); ++i) {
      const std::string option_path = path + "/" + keyword + "/" + std::to_string(i);
      const std::string option_name = name + "-" + std::to_string(i);
      Expected<std::string> expression = std::string();
      if (siblings.empty()) {
        expression = Visit(options[i], option_path, option_name, depth + 1);
      } else {
        // The keywords beside anyOf apply to every option: folded into each as an allOf.
        auto merged = FoldAllOf(root_, AllOfWith(siblings, options[i]));
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

  // The members of enum (or const, or both: those equal to it) that satisfy every other keyword
  // of the schema (type, not, minLength, ...), as alternatives.
  Expected<std::string> EnumExpression(const Json& schema, const std::string& path,
                                       const std::string& name) {
    const std::string keyword = schema.contains("enum") ? "enum" : "const";
    const Json single = Json::array({schema.contains("const") ? schema["const"] : Json()});
    const Json& members = keyword == "enum" ? schema["enum"] : single;
    if (!members.is_array() || members.empty()) {
      return Fail(path + "/enum", "`enum` must be a non-empty array");
    }
    // The other keywords, checked member by member (enum itself is not searched again, so a
    // large enum stays linear).
    Json others = Json::object();
    for (const auto& [other, value] : schema.items()) {
      if (other != "enum" && other != "const") others[other] = value;
    }
    std::vector<std::string> texts;
    for (const Json& member : members) {
      if (keyword == "enum" && schema.contains("const") && member != schema["const"]) continue;
      auto allowed = JsonValueSatisfies(member, others, path);
      if (!allowed) return Error{allowed.error()};
      if (*allowed) texts.push_back(Dump(member));
    }
    if (texts.empty()) {
      return Fail(path + "/" + keyword, "no value of `" + keyword +
                                            "` satisfies the schema's other keywords (`type`, "
                                            "`not`, ...)");
    }
    return LiteralAlternatives(
        std::move(texts), [&]() { return NewRuleName(name + "-enum"); }, &rules_);
  }

  // A keyword holding a non-negative integer count, or nullopt when absent. Past
  // kMaxCountKeyword a minimum is an Error quoting the keyword's value and a maximum is no
  // bound (nullopt).
  static Expected<std::optional<int64_t>> CountKeyword(const Json& schema,
                                                       const std::string& keyword, bool is_minimum,
                                                       const std::string& path) {
    auto found = schema.find(keyword);
    if (found == schema.end()) return std::optional<int64_t>();
    const bool whole =
        found->is_number_unsigned() || (found->is_number_integer() && found->get<int64_t>() >= 0) ||
        (found->is_number_float() && std::isfinite(found->get<double>()) &&
         found->get<double>() >= 0 && std::floor(found->get<double>()) == found->get<double>());
    if (!whole) {
      return Fail(path + "/" + keyword, "`" + keyword + "` must be a non-negative integer");
    }
    const bool too_large =
        found->is_number_unsigned()  ? found->get<uint64_t>() > uint64_t{kMaxCountKeyword}
        : found->is_number_integer() ? found->get<int64_t>() > kMaxCountKeyword
                                     : found->get<double>() > static_cast<double>(kMaxCountKeyword);
    if (!too_large) {
      return std::optional<int64_t>(found->is_number_float()
                                        ? static_cast<int64_t>(found->get<double>())
                                        : found->get<int64_t>());
    }
    if (!is_minimum) return std::optional<int64_t>();
    return Fail(path + "/" + keyword,
                "`" + keyword + "` of " + CountText(*found) + " is too large");
  }

  // A whole number as its digits (a large double in full, as it was most likely written), for
  // messages.
  static std::string CountText(const Json& value) {
    if (!value.is_number_float() || value.get<double>() >= 1e21) return Dump(value);
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value.get<double>(),
                                      std::chars_format::fixed);
    return std::string(buffer, result.ptr);
  }

  // The minimum and maximum count keywords of a schema, checked to be in order.
  Expected<std::pair<int64_t, std::optional<int64_t>>> CountRange(const Json& schema,
                                                                  const std::string& min_keyword,
                                                                  const std::string& max_keyword,
                                                                  const std::string& path) {
    auto min_count = CountKeyword(schema, min_keyword, /*is_minimum=*/true, path);
    if (!min_count) return Error{min_count.error()};
    auto max_count = CountKeyword(schema, max_keyword, /*is_minimum=*/false, path);
    if (!max_count) return Error{max_count.error()};
    if (*max_count && min_count->value_or(0) > **max_count) {
      return Fail(path, "`" + min_keyword + "` is greater than `" + max_keyword + "`");
    }
    return std::make_pair(min_count->value_or(0), *max_count);
  }

  // `item` repeated min_count to max_count times (max_count absent: unbounded), as GBNF.
  std::string Repeat(const std::string& item, int64_t min_count, std::optional<int64_t> max_count,
                     const std::string& hint) {
    if (max_count && *max_count == 0) return std::string();
    const std::string base = IsSingleTerm(item) ? item : "(" + item + ")";
    if (min_count > kMaxCountedRepetition || (max_count && *max_count > kMaxCountedRepetition)) {
      std::string exactly = Exactly(item, min_count, hint);
      std::string more = max_count ? AtMost(item, *max_count - min_count, hint) : base + "*";
      return exactly.empty() || more.empty() ? exactly + more : exactly + " " + more;
    }
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

  // Counts past kMaxCountedRepetition, decimal digit by digit, from rules that match the item
  // 10^k times (k ≥ 3), so that the grammar grows with the number of digits. 12345 items
  // exactly, and at most 54321:
  //
  //   x1e4 x1e3{2} x{345}                                 x1e3 ::= x{1000}
  //                                                       x1e4 ::= x1e3{10}
  //   x1e4{0,4} x1e3{0,9} x{0,999}                        (fewer than 50000)
  //   | x1e4{5} (x1e3{0,3} x{0,999} | x1e3{4} x{0,321})   (50000 to 54321)
  //
  // `item` exactly `count` times.
  std::string Exactly(const std::string& item, int64_t count, const std::string& hint) {
    if (count <= kMaxCountedRepetition) return Repeat(item, count, count, hint);
    std::string text;
    int64_t power = 1;
    int exponent = 0;
    while (power <= count / 10) {
      power *= 10;
      ++exponent;
    }
    for (; power >= 1000; power /= 10, --exponent) {
      const int64_t digit = count / power % 10;
      if (digit == 0) continue;
      text += (text.empty() ? "" : " ") + Repeat(PowerOf(item, exponent, hint), digit, digit, hint);
    }
    const std::string rest = Repeat(item, count % 1000, count % 1000, hint);
    return rest.empty() ? text : text + " " + rest;
  }

  // `item` from zero to `count` times.
  std::string AtMost(const std::string& item, int64_t count, const std::string& hint) {
    if (count <= kMaxCountedRepetition) return Repeat(item, 0, count, hint);
    int64_t power = 1;
    int exponent = 0;
    while (power <= count / 10) {
      power *= 10;
      ++exponent;
    }
    const int64_t top_digit = count / power;
    const std::string power_rule = PowerOf(item, exponent, hint);
    // Fewer than top_digit · 10^exponent items, or that many and at most the rest.
    std::string fewer = Repeat(power_rule, 0, top_digit - 1, hint);
    for (int64_t lower = power / 10, k = exponent - 1; lower >= 1000; lower /= 10, --k) {
      fewer +=
          (fewer.empty() ? "" : " ") + Repeat(PowerOf(item, static_cast<int>(k), hint), 0, 9, hint);
    }
    fewer += (fewer.empty() ? "" : " ") + Repeat(item, 0, 999, hint);
    std::string most = Repeat(power_rule, top_digit, top_digit, hint);
    if (count % power > 0) most += " " + AtMost(item, count % power, hint);
    return "(" + fewer + " | " + most + ")";
  }

  // A rule matching `item` 10^exponent times (exponent ≥ 3).
  std::string PowerOf(const std::string& item, int exponent, const std::string& hint) {
    const std::string key = std::to_string(exponent) + " " + item;
    if (auto known = power_rules_.find(key); known != power_rules_.end()) return known->second;
    const std::string body =
        exponent == 3 ? Repeat(item, 1000, 1000, hint) : PowerOf(item, exponent - 1, hint) + "{10}";
    const std::string name = AddRule(hint + "-1e" + std::to_string(exponent), body);
    power_rules_[key] = name;
    return name;
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
    const std::string characters = Repeat(Use(kChar), range->first, range->second, name + "-chars");
    return std::string(kQuote) + (characters.empty() ? "" : " " + characters) + " " + kQuote;
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
    auto find_property = [&](const std::string& key) {
      return std::find_if(properties.begin(), properties.end(),
                          [&](const Property& p) { return p.key == key; });
    };
    auto is_required = [&](const std::string& key) {
      auto listed = find_property(key);
      return listed != properties.end() && listed->required;
    };
    auto may_appear = [&](const std::string& key) {
      return named.count(key) > 0 || additional->allowed;
    };
    // Makes `key` (a string, from the names at `names_path`) a required property.
    auto require = [&](const Json& key, const std::string& names_path) -> std::optional<Error> {
      if (!key.is_string()) return Fail(names_path, "must be an array of names");
      const std::string& key_text = key.get_ref<const std::string&>();
      if (auto listed = find_property(key_text); listed != properties.end()) {
        listed->required = true;
      } else if (additional->allowed) {
        // Required but not listed: an additional property that must be present.
        properties.push_back({key_text, additional->schema, path + "/additionalProperties", true});
        named.insert(key_text);
      } else {
        return Fail(names_path, "required property \"" + key_text +
                                    "\" is not in `properties` and no other properties are "
                                    "allowed");
      }
      return std::nullopt;
    };
    if (schema.contains("required")) {
      const Json& required = schema["required"];
      if (!required.is_array()) return Fail(path + "/required", "must be an array of names");
      for (const Json& key : required) {
        if (auto error = require(key, path + "/required")) return *error;
      }
    }
    // dependentRequired (and the lists of `dependencies`): the properties a present one needs.
    // They fold into `required` exactly when the trigger is required (its dependents become
    // required, until nothing changes), cannot appear, or needs only required properties.
    struct Dependent {
      std::string trigger;
      const Json* names;
      std::string path;
    };
    std::vector<Dependent> dependents;
    for (const std::string keyword : {"dependentRequired", "dependencies", "dependentSchemas"}) {
      auto found = schema.find(keyword);
      if (found == schema.end()) continue;
      if (!found->is_object()) return Fail(path + "/" + keyword, "must be an object");
      for (const auto& [trigger, needed] : found->items()) {
        const std::string entry_path = path + "/" + keyword + "/" + PointerToken(trigger);
        if (needed.is_array() && keyword != "dependentSchemas") {
          dependents.push_back({trigger, &needed, entry_path});
        } else if (keyword == "dependentRequired") {
          return Fail(entry_path, "must be an array of names");
        } else if (needed != Json(true) && may_appear(trigger)) {
          // (a schema that applies to the whole object when one property is present)
          return Fail(entry_path, "`" + keyword +
                                      "` with a schema is supported only beside "
                                      "`enum` or `const`, or for a property that cannot appear");
        }
      }
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (const Dependent& dependent : dependents) {
        if (!is_required(dependent.trigger)) continue;
        for (const Json& key : *dependent.names) {
          if (key.is_string() && is_required(key.get<std::string>())) continue;
          if (auto error = require(key, dependent.path)) return *error;
          changed = true;
        }
      }
    }
    for (const Dependent& dependent : dependents) {
      if (is_required(dependent.trigger) || !may_appear(dependent.trigger)) continue;
      for (const Json& key : *dependent.names) {
        if (!key.is_string()) return Fail(dependent.path, "must be an array of names");
        if (!is_required(key.get<std::string>())) {
          return Fail(dependent.path, "property \"" + key.get<std::string>() +
                                          "\" needed only when the optional property \"" +
                                          dependent.trigger + "\" is present is not supported");
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
    std::string content = JoinGbnfAlternatives(firsts);
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
        const std::string more =
            Repeat(next_item, std::max<int64_t>(min_items - 1, 0), max_more, name + "-items");
        const std::string listed = item_term + (more.empty() ? "" : " " + more);
        if (min_items == 0) return open + " (" + listed + Space() + ")? \"]\"";
        return open + " " + listed + close;
      }
      std::optional<int64_t> max_more;
      if (max_items) max_more = *max_items - num_prefix;
      const std::string more = Repeat(next_item, std::max<int64_t>(min_items - num_prefix, 0),
                                      max_more, name + "-items");
      if (!more.empty()) items += " " + more;
    }
    if (items.empty()) return open + " \"]\"";
    return open + " " + items + close;
  }

  std::string FixedRule(const std::string& name) const {
    if (name == kWs) return whitespace_;
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
    if (options_.any_whitespace && !options_.whitespace_pattern.empty()) {
      text += "; whitespace between tokens: whitespace_pattern";
    } else if (options_.any_whitespace) {
      text += "; whitespace between tokens: a space, or a newline and up to " +
              std::to_string(kMaxJsonIndent) + " spaces or tabs";
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
  // The body of the whitespace rule: the default, or whitespace_pattern compiled.
  std::string whitespace_ = "(\" \" | \"\\n\" [ \\t]{0," + std::to_string(kMaxJsonIndent) + "})?";
  std::set<std::string> used_names_;
  std::map<std::string, int> next_suffix_;  // NewRuleName's next suffix for each base
  std::set<std::string> used_fixed_rules_;
  std::vector<std::pair<std::string, std::string>> rules_;  // name, body; in order of creation
  std::map<std::string, std::string> ref_rules_;            // $ref → rule name
  std::deque<PendingRef> pending_refs_;
  std::deque<Json> owned_schemas_;  // schemas made here ($ref with keywords beside it)
  std::map<std::string, std::string> power_rules_;  // "exponent item" → PowerOf's rule
  std::vector<std::string> notes_;
};

}  // namespace

Expected<std::string> JsonSchemaToGbnf(const nlohmann::ordered_json& schema,
                                       const JsonSchemaGrammarOptions& options) {
  return SchemaConverter(schema, options).Convert();
}

}  // namespace vllm
