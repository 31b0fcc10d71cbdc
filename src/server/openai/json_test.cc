#include "server/openai/json.h"

#include <gtest/gtest.h>

namespace vllm::server {
namespace {

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(ParseJsonObjectTest, RefusesNestingPastTheLimitBeforeParsing) {
  EXPECT_TRUE(ParseJsonObject("{\"a\": " + Nested(kMaxJsonDepth - 1) + "}").ok());
  auto deep = ParseJsonObject("{\"a\": " + Nested(kMaxJsonDepth) + ", \"b\": 1}");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error(), "The request body nests JSON deeper than 128 levels.");
  // The reproducer of the remote crash: 60,000 levels in a field followed by another key.
  EXPECT_FALSE(ParseJsonObject("{\"tools\": " + Nested(60000) + ", \"x\": 1}").ok());
  // Unbalanced openers count too, so a truncated deep body is refused the same way.
  EXPECT_FALSE(ParseJsonObject("{\"a\": " + std::string(100000, '[')).ok());
}

TEST(ParseJsonObjectTest, BracketsInStringsDoNotCount) {
  const std::string brackets(1000, '[');
  auto body = ParseJsonObject("{\"a\": \"" + brackets + "\\\"" + brackets + "\", \"b\": \"\\\\\"}");
  ASSERT_TRUE(body.ok()) << body.error();
  EXPECT_EQ((*body)["a"].get<std::string>(), brackets + "\"" + brackets);
  EXPECT_EQ((*body)["b"].get<std::string>(), "\\");
}

TEST(ParseJsonObjectTest, NamesTheProblem) {
  EXPECT_EQ(ParseJsonObject("{\"a\": ").error(), "The request body is not valid JSON.");
  EXPECT_EQ(ParseJsonObject("[1]").error(), "The request body must be a JSON object.");
  EXPECT_EQ(ParseJsonObject("").error(), "The request body is not valid JSON.");
}

TEST(ReadFieldTest, ReadsPresentFieldsAndNamesWrongTypes) {
  const Json body = Json::parse(R"({"n": 99999999999, "flag": true, "name": 3})");
  int n = 0;
  EXPECT_FALSE(ReadField(body, "n", GetInt, &n).has_value());
  EXPECT_EQ(n, std::numeric_limits<int>::max());  // saturates, then fails the range check
  bool flag = false;
  EXPECT_FALSE(ReadField(body, "flag", GetBool, &flag).has_value());
  EXPECT_TRUE(flag);
  std::string name = "kept";
  EXPECT_FALSE(ReadField(body, "absent", GetString, &name).has_value());
  EXPECT_EQ(name, "kept");
  auto error = ReadField(body, "name", GetString, &name);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->param, "name");
  EXPECT_EQ(error->message, "name: Input should be a valid string");
}

}  // namespace
}  // namespace vllm::server
