// Tests of the JSON Schema compiler through the grammar engine: for each schema feature, valid
// documents are accepted and invalid ones (a required property missing, an extra property, a
// wrong type, a value outside an enum or a range, bad nesting) rejected; errors name the path.
#include "structured_output/json_schema_grammar.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "structured_output/grammar_matcher.h"
#include "structured_output/test_vocabulary.h"

namespace vllm {
namespace {

using Json = nlohmann::ordered_json;

std::shared_ptr<const CompiledGrammar> CompileSchema(const std::string& schema,
                                                     const JsonSchemaGrammarOptions& options = {}) {
  const Json parsed = Json::parse(schema, nullptr, false);
  EXPECT_FALSE(parsed.is_discarded()) << schema;
  auto gbnf = JsonSchemaToGbnf(parsed, options);
  EXPECT_TRUE(gbnf.ok()) << schema << ": " << gbnf.error();
  return gbnf.ok() ? CompileGbnf(*gbnf) : nullptr;
}

std::string SchemaError(const std::string& schema) {
  auto gbnf = JsonSchemaToGbnf(Json::parse(schema, nullptr, false));
  EXPECT_FALSE(gbnf.ok()) << schema;
  return gbnf.ok() ? "" : gbnf.error();
}

void ExpectDocuments(const std::shared_ptr<const CompiledGrammar>& grammar,
                     const std::vector<std::string>& valid,
                     const std::vector<std::string>& invalid) {
  ASSERT_NE(grammar, nullptr);
  for (const std::string& document : valid) EXPECT_TRUE(Accepts(grammar, document)) << document;
  for (const std::string& document : invalid) {
    EXPECT_FALSE(Accepts(grammar, document)) << document;
  }
}

TEST(JsonSchemaGrammarTest, ScalarTypes) {
  ExpectDocuments(CompileSchema(R"({"type": "string"})"),
                  {R"("")", R"("hi")", R"("esc \" \\ \/ \b \f \n \r \t \u00e9")", R"("é☕")"},
                  {R"(hi)", R"("a"b")", "\"raw\nnewline\"", R"("\x")", R"("\u12")", "1"});
  ExpectDocuments(CompileSchema(R"({"type": "integer"})"), {"0", "-7", "1234567890123"},
                  {"-0", "01", "1.5", "1e3", "+1", "\"1\""});
  ExpectDocuments(CompileSchema(R"({"type": "number"})"),
                  {"0", "-0", "1.5", "-0.25", "1e3", "2.5E-7", "10"},
                  {"01", ".5", "1.", "1e", "+1", "NaN"});
  ExpectDocuments(CompileSchema(R"({"type": "boolean"})"), {"true", "false"}, {"True", "1"});
  ExpectDocuments(CompileSchema(R"({"type": "null"})"), {"null"}, {"None", "\"null\""});
  ExpectDocuments(CompileSchema(R"({"type": ["integer", "null"]})"), {"3", "null"},
                  {"\"3\"", "true"});
  ExpectDocuments(CompileSchema(R"({})"), {"1", "\"s\"", "[1,{\"a\":null}]", "{}"}, {"", "nul"});
}

const char* kPersonSchema = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string"},
    "age": {"type": "integer"},
    "email": {"type": "string"}
  },
  "required": ["name", "age"]
})";

TEST(JsonSchemaGrammarTest, ObjectPropertiesInOrderRequiredAndOptional) {
  ExpectDocuments(CompileSchema(kPersonSchema),
                  {R"({"name":"Ann","age":30})", R"({"name":"Ann","age":30,"email":"a@b.c"})",
                   "{\n  \"name\": \"Ann\",\n  \"age\": 30\n}"},
                  {R"({"name":"Ann"})",                        // required age missing
                   R"({"age":30})",                            // required name missing
                   R"({"age":30,"name":"Ann"})",               // out of schema order
                   R"({"name":"Ann","age":30,"extra":1})",     // no additional properties
                   R"({"name":"Ann","age":"30"})",             // wrong type
                   R"({"name":"Ann","age":30,"email":"x",})",  // trailing comma
                   R"({"name":"Ann","age":30,"age":30})"});    // repeated
}

TEST(JsonSchemaGrammarTest, OptionalPropertiesMaySkip) {
  auto grammar = CompileSchema(R"({"type": "object", "properties": {
      "a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}}})");
  ExpectDocuments(grammar,
                  {"{}", R"({"a":1})", R"({"b":2})", R"({"c":3})", R"({"a":1,"c":3})",
                   R"({"b":2,"c":3})", R"({"a":1,"b":2,"c":3})"},
                  {R"({"c":3,"a":1})", R"({"d":4})", R"({,"a":1})", R"({"a":1,})"});
}

TEST(JsonSchemaGrammarTest, RequiredPropertyAfterOptionalOnes) {
  ExpectDocuments(CompileSchema(R"({"type": "object", "properties": {
      "a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}},
      "required": ["b"]})"),
                  {R"({"b":2})", R"({"a":1,"b":2})", R"({"b":2,"c":3})", R"({"a":1,"b":2,"c":3})"},
                  {"{}", R"({"a":1})", R"({"c":3})", R"({"a":1,"c":3})"});
}

TEST(JsonSchemaGrammarTest, AdditionalProperties) {
  ExpectDocuments(CompileSchema(R"({"type": "object", "properties": {"id": {"type": "integer"}},
      "required": ["id"], "additionalProperties": {"type": "string"}})"),
                  {R"({"id":1})", R"({"id":1,"x":"a","y":"b"})", R"({"id":1,"ids":"a"})"},
                  {R"({"id":1,"x":2})", R"({"x":"a","id":1})", R"({"id":1,"id":"a"})"});
  ExpectDocuments(CompileSchema(R"({"type": "object", "properties": {"id": {"type": "integer"}},
      "additionalProperties": true})"),
                  {"{}", R"({"id":1,"x":[1]})", R"({"x":{"y":null}})"}, {R"({"id":"1"})"});
  // A bare object schema accepts any object, as xgrammar's {"type": "object"}.
  ExpectDocuments(CompileSchema(R"({"type": "object"})"), {"{}", R"({"a":{"b":[1,2]}})"},
                  {"[]", "1"});
  // Required properties not listed in properties come from additionalProperties.
  ExpectDocuments(
      CompileSchema(
          R"({"type": "object", "required": ["k"], "additionalProperties": {"type": "integer"}})"),
      {R"({"k":1})", R"({"k":1,"z":2})"}, {"{}", R"({"k":"1"})"});
  // Without strict mode an object with properties takes others too.
  ExpectDocuments(CompileSchema(R"({"type": "object", "properties": {"a": {"type": "integer"}}})",
                                {.strict = false}),
                  {R"({"a":1,"b":"x"})"}, {R"({"a":"x"})"});
  // disable_additional_properties: even a bare object is closed.
  ExpectDocuments(CompileSchema(R"({"type": "object"})", {.disallow_additional_properties = true}),
                  {"{}"}, {R"({"a":1})"});
}

TEST(JsonSchemaGrammarTest, EnumAndConst) {
  ExpectDocuments(CompileSchema(R"({"enum": ["red", "say \"hi\"", 3, null, true, {"a": [1]}]})"),
                  {R"("red")", R"("say \"hi\"")", "3", "null", "true", R"({"a":[1]})"},
                  {R"("blue")", "4", "false", R"("3")", R"({"a":[2]})"});
  ExpectDocuments(CompileSchema(R"({"type": "string", "enum": ["a", 1, "b"]})"),
                  {R"("a")", R"("b")"}, {"1"});
  ExpectDocuments(CompileSchema(R"({"const": "fixed"})"), {R"("fixed")"}, {R"("other")"});
  EXPECT_NE(SchemaError(R"({"type": "integer", "enum": ["a"]})").find("#/enum"), std::string::npos);
}

TEST(JsonSchemaGrammarTest, AnyOfOneOfAllOf) {
  ExpectDocuments(
      CompileSchema(R"({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 2}]})"),
      {"1", R"("ab")"}, {R"("abc")", "null"});
  ExpectDocuments(CompileSchema(R"({"oneOf": [{"type": "boolean"}, {"type": "null"}]})"),
                  {"true", "null"}, {"0"});
  ExpectDocuments(CompileSchema(R"({"allOf": [
      {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
      {"properties": {"b": {"type": "string"}}, "required": ["b"]}]})"),
                  {R"({"a":1,"b":"x"})"}, {R"({"a":1})", R"({"b":"x"})"});
  // allOf inside merged subschemas is folded too.
  ExpectDocuments(CompileSchema(R"({"allOf": [
      {"type": "array", "items": {"allOf": [{"type": "integer"}]}},
      {"type": "array", "items": {"allOf": [{"minimum": 3}]}, "maxItems": 2}]})"),
                  {"[]", "[3,4]"}, {"[2]", "[3,4,5]", "[3.5]"});
  // Keywords beside anyOf apply to every option.
  ExpectDocuments(CompileSchema(R"({"type": "object", "properties": {"kind": {"type": "string"}},
      "anyOf": [{"required": ["kind"]}, {"type": "null"}]})"),
                  {R"({"kind":"x"})"}, {"{}", "null"});
  // One entry's additionalProperties governs the properties only the other names.
  ExpectDocuments(CompileSchema(R"({"allOf": [{"type": "object", "properties": {
      "a": {"type": "integer"}}, "additionalProperties": false},
      {"properties": {"b": {"type": "string"}}}]})"),
                  {"{}", R"({"a":1})"}, {R"({"a":1,"b":"x"})", R"({"b":"x"})"});
  ExpectDocuments(CompileSchema(R"({"allOf": [{"type": "object", "properties": {"a": {}},
      "additionalProperties": {"type": "integer"}}, {"properties": {"b": {}}, "required": ["b"]}]})"),
                  {R"({"b":1})", R"({"a":"x","b":2})"}, {R"({"b":"x"})", "{}"});
  EXPECT_NE(SchemaError(R"({"allOf": [{"type": "object", "properties": {"a": {}},
      "additionalProperties": false}, {"properties": {"b": {}}, "required": ["b"]}]})")
                .find("no value"),
            std::string::npos);
  EXPECT_NE(SchemaError(R"({"allOf": [{"type": "array", "prefixItems": [{}]},
      {"items": {"type": "integer"}}]})")
                .find("prefixItems"),
            std::string::npos);
  EXPECT_NE(SchemaError(R"({"allOf": [{"type": "string"}, {"type": "integer"}]})").find("allOf"),
            std::string::npos);
  EXPECT_NE(SchemaError(R"({"allOf": [{"pattern": "a"}, {"pattern": "b"}]})").find("pattern"),
            std::string::npos);
}

const char* kTreeSchema = R"({
  "$ref": "#/$defs/node",
  "$defs": {
    "node": {
      "type": "object",
      "properties": {
        "value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
      },
      "required": ["value"]
    }
  }
})";

TEST(JsonSchemaGrammarTest, RecursiveRefs) {
  auto grammar = CompileSchema(kTreeSchema);
  std::string deep = R"({"value":5})";
  for (int level = 4; level >= 0; --level) {
    deep = R"({"value":)" + std::to_string(level) + R"(,"children":[)" + deep + R"(,{"value":9}]})";
  }
  ExpectDocuments(grammar, {R"({"value":1})", R"({"value":1,"children":[]})", deep},
                  {R"({"children":[]})", R"({"value":1,"children":[{"value":"x"}]})",
                   deep.substr(0, deep.size() - 1)});
  // definitions (draft 7), "#" (the root itself) and a pointer into properties.
  ExpectDocuments(CompileSchema(R"({"type": "object", "properties": {
      "next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]},
      "same": {"$ref": "#/definitions/n"},
      "copy": {"$ref": "#/properties/same"}},
      "definitions": {"n": {"type": "number"}}})"),
                  {R"({"next":{"next":{"same":1.5}}})", R"({"next":null,"copy":2})"},
                  {R"({"next":{"same":"x"}})"});
  // Pydantic v1 wraps a described $ref in allOf; recursion through it still works.
  ExpectDocuments(CompileSchema(R"({"title": "Node", "type": "object", "properties": {
      "child": {"description": "the next", "allOf": [{"$ref": "#/definitions/Node"}]}},
      "definitions": {"Node": {"type": "object", "properties": {
          "child": {"description": "the next", "allOf": [{"$ref": "#/definitions/Node"}]}}}}})"),
                  {"{}", R"({"child":{"child":{"child":{}}}})"}, {R"({"child":1})"});
  EXPECT_NE(SchemaError(R"({"$ref": "#/$defs/missing"})").find("#/$defs/missing"),
            std::string::npos);
  EXPECT_NE(SchemaError(R"({"type": "object", "properties": {"a": {"$ref": "other.json"}}})")
                .find("#/properties/a/$ref"),
            std::string::npos);
}

TEST(JsonSchemaGrammarTest, Arrays) {
  ExpectDocuments(CompileSchema(R"({"type": "array", "items": {"type": "integer"},
      "minItems": 1, "maxItems": 3})"),
                  {"[1]", "[1,2,3]", "[ 1 , 2 ]"}, {"[]", "[1,2,3,4]", "[1,\"2\"]", "[1,]"});
  ExpectDocuments(CompileSchema(R"({"type": "array", "items": {"type": "string"}})"),
                  {"[]", R"(["a","b"])"}, {"[1]"});
  ExpectDocuments(CompileSchema(R"({"type": "array"})"), {"[]", R"([1,"a",[null]])"}, {"{}"});
  ExpectDocuments(CompileSchema(R"({"type": "array", "prefixItems": [{"type": "integer"},
      {"type": "string"}]})"),
                  {R"([1,"a"])"}, {"[1]", R"([1,"a",2])", R"(["a",1])"});
  ExpectDocuments(CompileSchema(R"({"type": "array", "prefixItems": [{"type": "integer"}],
      "items": {"type": "boolean"}, "maxItems": 3})"),
                  {"[1]", "[1,true]", "[1,true,false]"}, {"[1,true,false,true]", "[1,2]"});
  // A huge maxItems is built from powers of ten, not unrolled.
  ExpectDocuments(CompileSchema(R"({"type": "array", "items": {"type": "integer"},
      "maxItems": 1000000000})"),
                  {"[]", "[1,2,3]"}, {"[1,]"});
  EXPECT_NE(SchemaError(R"({"type": "array", "minItems": 3, "maxItems": 2})").find("minItems"),
            std::string::npos);
}

TEST(JsonSchemaGrammarTest, StringLengthPatternAndFormats) {
  ExpectDocuments(CompileSchema(R"({"type": "string", "minLength": 2, "maxLength": 3})"),
                  {R"("ab")", R"("abc")", R"("a\n")", R"("éé")"}, {R"("a")", R"("abcd")"});
  ExpectDocuments(CompileSchema(R"({"type": "string", "pattern": "^[a-z]+-\\d{2}$"})"),
                  {R"("ab-12")"}, {R"("ab-1")", R"("Ab-12")", R"("xab-12y")"});
  ExpectDocuments(CompileSchema(R"({"type": "string", "pattern": "say \"[^\"]*\""})"),
                  {R"("say \"hi\"")"}, {R"("say "hi"")", R"("say \"h\"i\"")"});
  const std::vector<std::tuple<std::string, std::vector<std::string>, std::vector<std::string>>>
      formats = {
          {"date", {"2024-02-29", "1999-12-31"}, {"2024-13-01", "2024-1-01", "24-01-01"}},
          {"time", {"23:59:60Z", "08:30:00.123+05:30"}, {"24:00:00Z", "08:30:00"}},
          {"date-time",
           {"2024-05-06T07:08:09Z", "2024-05-06t07:08:09.5-01:00"},
           {"2024-05-06 07:08:09", "2024-05-06T07:08Z"}},
          {"duration", {"P1Y2M3DT4H5M6S", "PT1S", "P2W", "P1D"}, {"P", "PT", "1Y", "P1S"}},
          {"uuid", {"123e4567-e89b-12d3-a456-426614174000"}, {"123e4567e89b12d3a456426614174000"}},
          {"ipv4",
           {"192.168.0.1", "0.0.0.0", "255.255.255.255"},
           {"256.1.1.1", "1.2.3", "01.2.3.4"}},
          {"ipv6",
           {"::1", "2001:db8::8a2e:370:7334", "::ffff:192.0.2.1", "1:2:3:4:5:6:7:8"},
           {"1:2:3:4:5:6:7:8:9", "12345::", ":::"}},
          {"email", {"john.doe@example.com", "a+b@x.io"}, {"john@", "@x.io", "a..b@x.io"}},
          {"hostname", {"example.com", "a-b.c"}, {"-a.com", "a_b.com"}},
          {"uri",
           {"https://example.com/a?b=c#d", "urn:isbn:0451450523"},
           {"no-scheme", "http://a b"}},
      };
  for (const auto& [format, valid, invalid] : formats) {
    auto grammar = CompileSchema(R"({"type": "string", "format": ")" + format + "\"}");
    std::vector<std::string> valid_documents;
    std::vector<std::string> invalid_documents;
    for (const std::string& value : valid) valid_documents.push_back("\"" + value + "\"");
    for (const std::string& value : invalid) invalid_documents.push_back("\"" + value + "\"");
    SCOPED_TRACE(format);
    ExpectDocuments(grammar, valid_documents, invalid_documents);
  }
  EXPECT_NE(SchemaError(R"({"type": "string", "format": "iri"})").find("iri"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"type": "string", "pattern": "a", "maxLength": 3})").find("maxLength"),
            std::string::npos);
  EXPECT_NE(SchemaError(R"j({"type": "string", "pattern": "(?=a)"})j").find("#/pattern"),
            std::string::npos);
}

TEST(JsonSchemaGrammarTest, IntegerRangesAreExact) {
  const std::vector<std::string> bounds = {
      R"("minimum": 0)",
      R"("minimum": -17, "maximum": 45)",
      R"("exclusiveMinimum": -3, "exclusiveMaximum": 120)",
      R"("maximum": -5)",
      R"("minimum": 1.5, "maximum": 99.5)",
      R"("minimum": 10, "exclusiveMinimum": 12)",
      R"("minimum": 100, "maximum": 100)",
  };
  for (const std::string& bound : bounds) {
    const Json schema = Json::parse(R"({"type": "integer", )" + bound + "}");
    auto grammar = CompileSchema(schema.dump());
    ASSERT_NE(grammar, nullptr) << bound;
    for (int value = -150; value <= 150; ++value) {
      auto bound_or = [&](const char* keyword, double absent) {
        return schema.contains(keyword) ? schema[keyword].get<double>() : absent;
      };
      const bool in_range =
          value >= bound_or("minimum", -1e9) && value <= bound_or("maximum", 1e9) &&
          value > bound_or("exclusiveMinimum", -1e9) && value < bound_or("exclusiveMaximum", 1e9);
      EXPECT_EQ(Accepts(grammar, std::to_string(value)), in_range) << bound << ": " << value;
    }
  }
  ExpectDocuments(CompileSchema(R"({"type": "integer", "minimum": -9223372036854775808,
      "maximum": 18446744073709551615})"),
                  {"-9223372036854775808", "18446744073709551615", "0"},
                  {"-9223372036854775809", "18446744073709551616"});
  EXPECT_NE(SchemaError(R"({"type": "integer", "minimum": 5, "maximum": 4})").find("no integer"),
            std::string::npos);
}

TEST(JsonSchemaGrammarTest, NumberRangesAreExact) {
  ExpectDocuments(CompileSchema(R"({"type": "number", "minimum": 0, "maximum": 1})"),
                  {"0", "1", "0.5", "1.000", "0.999999", "-0"}, {"1.0001", "-0.1", "2", "1e-3"});
  ExpectDocuments(CompileSchema(R"({"type": "number", "exclusiveMinimum": -2.5,
      "exclusiveMaximum": 12.25})"),
                  {"-2.4999", "0", "12.2499", "12", "-2"},
                  {"-2.5", "-2.50", "12.25", "12.3", "-3"});
  ExpectDocuments(CompileSchema(R"({"type": "number", "minimum": 0.1})"),
                  {"0.1", "0.10001", "5", "1000000.5"}, {"0.09999", "0", "-1"});
  ExpectDocuments(CompileSchema(R"({"type": "number", "maximum": -0.5, "minimum": -0.75})"),
                  {"-0.5", "-0.6", "-0.75"}, {"-0.4", "-0.76", "0"});
}

TEST(JsonSchemaGrammarTest, WhitespaceIsOneSeparatorByDefault) {
  // A space, or a newline and an indent, between two tokens: one-line and pretty-printed JSON.
  ExpectDocuments(CompileSchema(kPersonSchema),
                  {R"({"name":"A","age":1})", R"({ "name" : "A", "age": 1 })",
                   "{\n  \"name\": \"A\",\n  \"age\": 1\n}",
                   "{\n\t\"name\":\"A\",\n" + std::string(20, ' ') + "\"age\":1}"},
                  {"{\n\n  \"name\": \"A\", \"age\": 1}",  // two newlines in a row
                   R"({"name":  "A","age":1})",            // two spaces
                   "{ \n\"name\":\"A\",\"age\":1}",        // a space, then a newline
                   "{\n" + std::string(21, ' ') + R"("name":"A","age":1})",
                   R"( {"name":"A","age":1})",  // nothing around the value
                   "{\"name\":\"A\",\"age\":1}\n", "{\"name\":\"A\",\"age\":1}\r"});
  // whitespace_pattern replaces it: here any whitespace (xgrammar's default).
  auto any = CompileSchema(kPersonSchema, {.whitespace_pattern = "[ \\n\\t]*"});
  ExpectDocuments(any, {"{\n\n\n  \"name\"  :\n\n \"A\" ,\t\"age\":1\n\n}"},
                  {R"( {"name":"A","age":1})", "{\r\"name\":\"A\",\"age\":1}"});
  auto gbnf = JsonSchemaToGbnf(Json::parse(kPersonSchema), {.whitespace_pattern = "[a-"});
  ASSERT_FALSE(gbnf.ok());
  EXPECT_NE(gbnf.error().find("whitespace_pattern"), std::string::npos) << gbnf.error();
}

TEST(JsonSchemaGrammarTest, CompactSeparatorsWithoutAnyWhitespace) {
  ExpectDocuments(CompileSchema(kPersonSchema, {.any_whitespace = false}),
                  {R"({"name": "A", "age": 1, "email": "e"})"},
                  {R"({"name":"A","age":1})", R"({ "name": "A", "age": 1 })"});
}

TEST(JsonSchemaGrammarTest, InvalidSchemasNameThePath) {
  EXPECT_NE(SchemaError(R"({"type": 5})").find("#/type"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"type": "text"})").find("unknown type"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"type": ["string", 5, "null"]})").find("#/type"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"type": []})").find("#/type"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"properties": {"a": {"type": "array", "maxItems": -1}}})")
                .find("#/properties/a/maxItems"),
            std::string::npos);
  EXPECT_NE(SchemaError(R"({"type": "object", "properties": {"a": 3}})").find("#/properties/a"),
            std::string::npos);
  EXPECT_NE(SchemaError(R"({"type": "integer", "multipleOf": 3})").find("multipleOf"),
            std::string::npos);
  EXPECT_NE(SchemaError(R"({"type": "array", "uniqueItems": true})").find("uniqueItems"),
            std::string::npos);
  EXPECT_NE(SchemaError(R"({"type": "object", "patternProperties": {"a": {}}})")
                .find("patternProperties"),
            std::string::npos);
  EXPECT_NE(SchemaError(R"({"type": "object", "properties": {"a": {}}, "minProperties": 2})")
                .find("minProperties"),
            std::string::npos);
  EXPECT_NE(SchemaError("false").find("accepts no value"), std::string::npos);
}

TEST(JsonSchemaGrammarTest, KeywordsBesideEnumAndConstFilterTheirMembers) {
  ExpectDocuments(CompileSchema(R"({"enum": ["a", "b"], "not": {"const": "a"}})"), {R"("b")"},
                  {R"("a")"});
  ExpectDocuments(CompileSchema(R"({"enum": ["a", "bb", "ccc", 5, [1]], "minLength": 2,
      "not": {"enum": ["ccc"]}, "maxItems": 0})"),
                  {R"("bb")", "5"}, {R"("a")", R"("ccc")", "[1]"});
  ExpectDocuments(CompileSchema(R"({"enum": [1, 5, 7.5, 10], "minimum": 5,
      "exclusiveMaximum": 10, "type": "integer"})"),
                  {"5"}, {"1", "7.5", "10"});
  ExpectDocuments(CompileSchema(R"({"enum": [1, "x", "yy"], "if": {"type": "string"},
      "then": {"maxLength": 1}, "else": {"minimum": 0}})"),
                  {"1", R"("x")"}, {R"("yy")"});
  // oneOf exactly: 2 satisfies both options.
  ExpectDocuments(CompileSchema(R"({"enum": [1, 2, 3], "oneOf": [{"minimum": 2},
      {"maximum": 2}]})"),
                  {"1", "3"}, {"2"});
  ExpectDocuments(CompileSchema(R"({"const": "a", "enum": ["a", "b"]})"), {R"("a")"}, {R"("b")"});
  ExpectDocuments(CompileSchema(R"({"enum": [[1, 1], [1, 2], "s"], "uniqueItems": true,
      "multipleOf": 3})"),
                  {"[1,2]", R"("s")"}, {"[1,1]"});
  EXPECT_NE(SchemaError(R"({"enum": [3, 4], "multipleOf": 3})").find("#/multipleOf"),
            std::string::npos);
  ExpectDocuments(CompileSchema(R"({"enum": [{"a": 1}, {"b": 1}, {"a": 2, "b": 3}],
      "required": ["a"], "dependentRequired": {"b": ["a"]}, "maxProperties": 1})"),
                  {R"({"a":1})"}, {R"({"b":1})", R"({"a":2,"b":3})"});
  EXPECT_NE(SchemaError(R"({"const": "a", "enum": ["b"]})").find("#/enum"), std::string::npos);
  EXPECT_NE(SchemaError(R"({"enum": ["a"], "not": {"pattern": "a"}})").find("#/not/pattern"),
            std::string::npos);
  // A keyword for another type of value does not apply (nor, then, need it be checkable).
  ExpectDocuments(
      CompileSchema(R"({"enum": ["a", 2, [3]], "maxLength": 0, "properties": {"x": {}}})"),
      {"2", "[3]"}, {R"("a")"});
}

TEST(JsonSchemaGrammarTest, NotIfAndDependenciesAreEnforcedOrRefused) {
  ExpectDocuments(CompileSchema(R"({"not": {"type": "null"}})"), {"1", R"("a")", "{}", "[]"},
                  {"null"});
  ExpectDocuments(CompileSchema(R"({"type": ["integer", "null"], "not": {"type": "null"}})"), {"1"},
                  {"null", "1.5"});
  ExpectDocuments(CompileSchema(R"({"type": "object", "properties": {"a": {}, "b": {}},
      "required": ["a"], "dependentRequired": {"a": ["b"]}})"),
                  {R"({"a":1,"b":2})"}, {R"({"a":1})"});
  ExpectDocuments(CompileSchema(R"({"type": "object", "properties": {"a": {}, "b": {}, "c": {}},
      "required": ["a"], "dependencies": {"a": ["b"], "b": ["c"]}})"),
                  {R"({"a":1,"b":2,"c":3})"}, {R"({"a":1,"b":2})"});
  // A trigger that cannot appear asks for nothing; one whose needs are required already neither.
  ExpectDocuments(CompileSchema(R"({"type": "object", "properties": {"b": {}},
      "dependentRequired": {"a": ["b"]}, "dependentSchemas": {"a": false}})"),
                  {"{}", R"({"b":1})"}, {R"({"a":1})"});
  ExpectDocuments(CompileSchema(R"({"type": "object", "properties": {"a": {}, "b": {}},
      "required": ["b"], "dependentRequired": {"a": ["b"]}})"),
                  {R"({"b":1})", R"({"a":1,"b":2})"}, {R"({"a":1})"});
  for (const auto& [schema, keyword] : std::vector<std::pair<std::string, std::string>>{
           {R"({"type": "string", "not": {"const": "x"}})", "#/not"},
           {R"({"not": {"type": "integer"}})", "#/not"},
           {R"({"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}})",
            "#/if"},
           {R"({"type": "object", "properties": {"a": {}, "b": {}},
               "dependentRequired": {"a": ["b"]}})",
            "#/dependentRequired/a"},
           {R"({"type": "object", "properties": {"a": {}},
               "dependentSchemas": {"a": {"required": ["b"]}}})",
            "#/dependentSchemas/a"},
           {R"({"type": "object", "properties": {"a": {}},
               "dependencies": {"a": {"minProperties": 2}}})",
            "#/dependencies/a"},
       }) {
    EXPECT_NE(SchemaError(schema).find(keyword), std::string::npos) << schema;
  }
  // `if` alone, and `then` / `else` without `if`, constrain nothing (JSON Schema says so).
  ExpectDocuments(CompileSchema(R"({"type": "integer", "if": {"minimum": 3}})"), {"1", "5"}, {});
  ExpectDocuments(
      CompileSchema(R"({"type": "integer", "then": {"maximum": 0}, "else": {"maximum": 0}})"),
      {"1", "5"}, {});
}

TEST(JsonSchemaGrammarTest, KeywordsBesideRefApply) {
  ExpectDocuments(CompileSchema(R"({"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s",
      "maxLength": 2, "description": "two at most"})"),
                  {R"("ab")"}, {R"("abc")", "1"});
  // Recursive: each `next` needs its `v` too.
  ExpectDocuments(CompileSchema(R"({"$defs": {"node": {"type": "object", "properties": {
      "v": {"type": "integer"}, "next": {"$ref": "#/$defs/node", "required": ["v"]}}}},
      "$ref": "#/$defs/node", "required": ["v"]})"),
                  {R"({"v":1})", R"({"v":1,"next":{"v":2,"next":{"v":3}}})"},
                  {"{}", R"({"v":1,"next":{}})", R"({"v":1,"next":{"v":2,"next":{}}})"});
  EXPECT_NE(SchemaError(R"({"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s",
      "type": "integer"})")
                .find("no value"),
            std::string::npos);
}

TEST(JsonSchemaGrammarTest, TypeIsInferredFromKeywords) {
  ExpectDocuments(CompileSchema(R"({"minLength": 2})"), {R"("ab")"}, {R"("a")", "5"});
  ExpectDocuments(CompileSchema(R"({"minimum": 3, "maxLength": 1})"), {"3", "4.5", R"("a")"},
                  {"2", R"("ab")", "null"});
  ExpectDocuments(CompileSchema(R"({"required": ["k"]})"), {R"({"k":1})", R"({"k":1,"j":2})"},
                  {"{}", "1"});
}

TEST(JsonSchemaGrammarTest, AnnotationsAndUnknownKeywordsAreAccepted) {
  ExpectDocuments(CompileSchema(R"({"type": "string", "title": "t", "description": "d",
      "$comment": "c", "examples": ["x"], "default": "x", "deprecated": true, "readOnly": true,
      "writeOnly": false, "$schema": "https://json-schema.org/draft/2020-12/schema",
      "$id": "https://example.com/s", "$anchor": "s", "$dynamicAnchor": "d",
      "contentMediaType": "text/plain", "contentEncoding": "base64", "x-vendor": {"not": 1}})"),
                  {R"("x")"}, {"1"});
}

TEST(JsonSchemaGrammarTest, LargeCountsAreExactAndQuotedAsWritten) {
  auto grammar = CompileSchema(R"({"type": "string", "minLength": 2345, "maxLength": 4321})");
  auto string_of = [](size_t length) { return "\"" + std::string(length, 'a') + "\""; };
  ExpectDocuments(grammar, {string_of(2345), string_of(3000), string_of(4000), string_of(4321)},
                  {string_of(2344), string_of(4322), string_of(10)});
  ExpectDocuments(CompileSchema(R"({"type": "string", "maxLength": 10000})"),
                  {string_of(0), string_of(9999), string_of(10000)}, {string_of(10001)});
  auto array_of = [](size_t length) {
    std::string items;
    for (size_t i = 0; i < length; ++i) items += i == 0 ? "1" : ",1";
    return "[" + items + "]";
  };
  ExpectDocuments(CompileSchema(R"({"type": "array", "minItems": 2002, "maxItems": 2003})"),
                  {array_of(2002), array_of(2003)}, {array_of(2001), array_of(2004)});
  // A count past 2^62: a minimum is refused with its value as written, a maximum is no bound.
  for (const char* schema : {R"({"type": "string", "minLength": 18446744073709551616})",
                             R"({"type": "array", "minItems": 18446744073709551616})",
                             R"({"type": "object", "minProperties": 18446744073709551616})"}) {
    const std::string error = SchemaError(schema);
    EXPECT_NE(error.find("18446744073709551616"), std::string::npos) << error;
    EXPECT_EQ(error.find("4611686018427387904"), std::string::npos) << error;
  }
  EXPECT_NE(SchemaError(R"({"type": "string", "minLength": 9223372036854775807})")
                .find("9223372036854775807"),
            std::string::npos);
  ExpectDocuments(
      CompileSchema(R"({"type": "string", "minLength": 1, "maxLength": 18446744073709551616})"),
      {string_of(1), string_of(3000)}, {string_of(0)});
}

TEST(JsonSchemaGrammarTest, BoundedOnHugeInputs) {
  // 1000 levels of nesting: an error, not a crash.
  std::string deep = R"({"type": "integer"})";
  for (int level = 0; level < 1000; ++level) {
    deep = R"({"type": "array", "items": )" + deep + "}";
  }
  EXPECT_NE(SchemaError(deep).find("deeper than"), std::string::npos);
  // A large enum compiles and matches (as a trie of its values).
  Json values = Json::array();
  for (int i = 0; i < 5000; ++i) values.push_back("value-" + std::to_string(i));
  for (int i = 0; i < 100; ++i) values.push_back(i);
  auto grammar = CompileSchema(Json{{"enum", values}}.dump());
  ExpectDocuments(grammar, {R"("value-0")", R"("value-4999")", "0", "7", "99"},
                  {R"("value-5000")", R"("value-")", "100", R"("value-01")"});
  // A chain of 300 $defs, each referring to the next.
  Json chain = {{"$ref", "#/$defs/d0"}, {"$defs", Json::object()}};
  for (int i = 0; i < 300; ++i) {
    chain["$defs"]["d" + std::to_string(i)] =
        i < 299
            ? Json{{"type", "array"}, {"items", {{"$ref", "#/$defs/d" + std::to_string(i + 1)}}}}
            : Json{{"type", "null"}};
  }
  auto chained = CompileSchema(chain.dump());
  ExpectDocuments(chained, {std::string(299, '[') + "null" + std::string(299, ']')},
                  {std::string(298, '[') + "null" + std::string(298, ']')});
}

}  // namespace
}  // namespace vllm
