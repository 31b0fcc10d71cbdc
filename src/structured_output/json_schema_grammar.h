// JSON Schema → GBNF, for vLLM's response_format json_schema / guided_json /
// structured_outputs.json. Follows vLLM with its default backend, xgrammar (strict mode):
//
//  - types string, number, integer, boolean, null, object, array and lists of them; a schema with
//    no type is inferred as an object (properties, additionalProperties), an array (items,
//    prefixItems) or any JSON value;
//  - properties in the schema's order, `required` ones mandatory and the others optional;
//    additionalProperties false / true / a schema, after the named properties (their keys
//    differ from the named ones'); when absent it is false for an object with properties
//    (strict mode) and any value for an object without; unevaluatedProperties stands in for an
//    absent additionalProperties; a required key missing from properties takes the
//    additionalProperties schema;
//  - enum and const (the values' compact JSON; a large enum becomes a trie of rules), anyOf,
//    oneOf (as anyOf), allOf of schemas that merge into one (types intersect, properties merge,
//    bounds tighten, other keywords agree), keywords beside anyOf / oneOf merged into each
//    option;
//  - $ref to "#", "#/$defs/x", "#/definitions/x" or any "#/..." JSON pointer, one rule per
//    referenced schema, so recursive schemas work;
//  - items (and draft 4's tuple items with additionalItems), prefixItems (all of them required,
//    as xgrammar), minItems / maxItems;
//  - string minLength / maxLength (an escape sequence counts as one character), pattern (a full
//    match of the string's value, as xgrammar; JSON Schema itself would search), format: date,
//    time, date-time, duration, uuid, email, ipv4, ipv6, hostname, uri, uri-reference,
//    json-pointer, relative-json-pointer; pattern and format go through the regex compiler
//    inside the quotes, with JSON's escapes;
//  - integer and number minimum / maximum / exclusiveMinimum / exclusiveMaximum (draft 4's
//    boolean forms too), exactly (a bounded number has no exponent, as xgrammar).
//
// Refused with an Error naming the keyword and its JSON pointer (vLLM refuses them too):
// multipleOf, uniqueItems, contains, minContains, maxContains, patternProperties,
// propertyNames, minProperties / maxProperties (unless the schema already implies them), other
// formats, pattern or format together with minLength / maxLength, pattern with format,
// non-local $ref, $dynamicRef, $recursiveRef; also invalid shapes (`type: 5`, a $ref to nothing,
// minItems > maxItems) and schemas no value satisfies.
// Ignored, as xgrammar ignores them, each noted in a comment atop the grammar: not, if, then,
// else, dependentRequired, dependentSchemas, dependencies, keywords beside a $ref. Unknown
// keywords and annotations (title, description, default, ...) are ignored silently.
//
// Whitespace (any_whitespace): at most max_whitespace_run characters of [ \n\t] between tokens
// and none around the value. xgrammar allows [ \n\t]* by default (bounded only through its
// max_whitespace_cnt option); it is bounded here so that a model cannot loop on newlines.
// Without any_whitespace, the output is one line with ", " and ": " separators (xgrammar's
// separators then, as Python's json.dumps).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/expected.h"

namespace vllm {

struct JsonSchemaGrammarOptions {
  // vLLM's default; false is vLLM's disable_any_whitespace.
  bool any_whitespace = true;
  // vLLM's disable_additional_properties: every object schema without additionalProperties
  // (a bare {"type": "object"} included) allows no other properties.
  bool disallow_additional_properties = false;
  // xgrammar's strict_mode (vLLM uses it): an object with properties and no
  // additionalProperties allows no others, and prefixItems without items allow no more items.
  // Off: both allow any JSON value.
  bool strict = true;
  // The most whitespace characters in a row between two tokens (any_whitespace).
  int max_whitespace_run = 20;
};

// The deepest nesting of schemas (properties, items, anyOf, ...) within one referenced schema.
constexpr int kMaxJsonSchemaDepth = 128;

// Counted repetitions (minItems, maxItems, minLength, maxLength) are written as GBNF {m,n} up
// to this count. A larger maximum is not enforced (the grammar says so in a comment); a larger
// minimum is an Error.
constexpr int64_t kMaxCountedRepetition = 2000;

// A grammar whose `root` matches exactly the JSON documents valid under `schema` (a parsed JSON
// Schema whose object key order is the schema's). Errors name the JSON pointer of the problem.
Expected<std::string> JsonSchemaToGbnf(const nlohmann::ordered_json& schema,
                                       const JsonSchemaGrammarOptions& options = {});

}  // namespace vllm
