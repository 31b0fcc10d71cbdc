// JSON Schema → GBNF, for vLLM's response_format json_schema / guided_json /
// structured_outputs.json. Follows vLLM with its default backend, xgrammar (strict mode):
//
//  - types string, number, integer, boolean, null, object, array and lists of them; a schema with
//    no type allows the types whose keywords it uses (see below), or any JSON value;
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
//    boolean forms too), exactly (a bounded number has no exponent, as xgrammar);
//  - counts (minLength, maxItems, ...) exactly, however large: a count past
//    kMaxCountedRepetition is built from powers of ten of the item;
//  - required (a required key missing from properties takes the additionalProperties
//    schema), dependentRequired and the array form of draft 4-7's `dependencies` where they
//    fold into the required list (the trigger property is required or cannot appear);
//  - keywords beside a $ref apply with it (2019-09 and later; an allOf of the two);
//  - enum / const members are checked against every other keyword of their schema (type,
//    not, if / then / else, bounds, ...; see json_schema_value_check.h), so
//    {"enum": ["a", "b"], "not": {"const": "a"}} allows only "b".
// Without `type`, the types whose keywords the schema uses are the ones allowed (as xgrammar
// infers an object from `properties`): {"minLength": 2} allows only strings of two or more.
//
// Refused with an Error naming the keyword and its JSON pointer (vLLM refuses most of them too):
// multipleOf, uniqueItems, contains, minContains, maxContains, patternProperties,
// propertyNames, minProperties / maxProperties (unless the schema already implies them), other
// formats, pattern or format together with minLength / maxLength, pattern with format,
// non-local $ref, $dynamicRef, $recursiveRef; `not`, `if` with `then` / `else`,
// dependentSchemas (and `dependencies` with a schema) except beside enum / const;
// dependentRequired that does not fold; also invalid shapes (`type: 5`, a $ref to nothing,
// minItems > maxItems) and schemas no value satisfies. oneOf is compiled as anyOf (as xgrammar
// does): exact when its options exclude each other, as a discriminated union's do.
// Annotations (title, description, default, examples, $comment, readOnly, contentMediaType,
// ...) and keywords that are not JSON Schema's are ignored, as JSON Schema says; so are `then`
// / `else` without `if`, and `if` alone, which constrain nothing.
//
// Whitespace between tokens (any_whitespace, vLLM's default): by default at most one separator,
// either a space or a newline with up to kMaxJsonIndent spaces or tabs of indent
// (llama.cpp's `space` rule), so that pretty-printed and one-line
// JSON both fit but a model cannot wander through runs of blank lines; none around the value.
// `whitespace_pattern` (vLLM's field of that name: a regex) replaces it, e.g. "[ \n\t]*" for
// any whitespace (xgrammar's default). Without any_whitespace (vLLM's disable_any_whitespace),
// the output is one line with ", " and ": " separators (xgrammar's separators then, as
// Python's json.dumps).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/expected.h"

namespace vllm {

// The longest indent the default whitespace allows after a newline.
constexpr int kMaxJsonIndent = 20;

struct JsonSchemaGrammarOptions {
  // vLLM's default; false is vLLM's disable_any_whitespace.
  bool any_whitespace = true;
  // With any_whitespace: a regex for the whitespace between two tokens (vLLM's
  // whitespace_pattern); empty for the default (a space, or a newline and an indent).
  std::string whitespace_pattern;
  // vLLM's disable_additional_properties: every object schema without additionalProperties
  // (a bare {"type": "object"} included) allows no other properties.
  bool disallow_additional_properties = false;
  // xgrammar's strict_mode (vLLM uses it): an object with properties and no
  // additionalProperties allows no others, and prefixItems without items allow no more items.
  // Off: both allow any JSON value.
  bool strict = true;
};

// The deepest nesting of schemas (properties, items, anyOf, ...) within one referenced schema.
constexpr int kMaxJsonSchemaDepth = 128;

// Counted repetitions (minItems, maxItems, minLength, maxLength) are written as GBNF {m,n} up
// to this count; larger ones as repetitions of rules that each match ten times the last.
constexpr int64_t kMaxCountedRepetition = 2000;
// The largest count keyword accepted (2^62); a larger minimum is an Error quoting it, a larger
// maximum leaves the count unbounded (no output is that long).
constexpr int64_t kMaxCountKeyword = int64_t{1} << 62;

// A grammar whose `root` matches exactly the JSON documents valid under `schema` (a parsed JSON
// Schema whose object key order is the schema's). Errors name the JSON pointer of the problem.
Expected<std::string> JsonSchemaToGbnf(const nlohmann::ordered_json& schema,
                                       const JsonSchemaGrammarOptions& options = {});

}  // namespace vllm
