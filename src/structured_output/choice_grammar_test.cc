// Tests of the choice and any-JSON-object grammars through the grammar engine.
#include "structured_output/choice_grammar.h"

#include <gtest/gtest.h>

#include <string>

#include "structured_output/grammar_matcher.h"
#include "structured_output/test_vocabulary.h"

namespace vllm {
namespace {

TEST(ChoiceGrammarTest, AcceptsExactlyOneChoice) {
  const std::vector<std::string> choices = {"positive",    "negative",   "say \"hi\"",
                                            "back\\slash", "two\nlines", "tab\there",
                                            "café ☕",      "",           "pos"};
  auto gbnf = ChoiceToGbnf(choices);
  ASSERT_TRUE(gbnf.ok()) << gbnf.error();
  auto grammar = CompileGbnf(*gbnf);
  for (const std::string& choice : choices) EXPECT_TRUE(Accepts(grammar, choice)) << choice;
  for (const char* other : {"positivenegative", "posit", "say hi", "back\\\\slash", "two lines",
                            "café", "Positive", " positive"}) {
    EXPECT_FALSE(Accepts(grammar, other)) << other;
  }
}

TEST(ChoiceGrammarTest, ManyChoicesSharingPrefixes) {
  // Thousands of choices, some prefixes of others: a trie, not thousands of parse stacks.
  std::vector<std::string> choices;
  for (int i = 0; i < 20000; ++i) choices.push_back("label-" + std::to_string(i));
  choices.push_back("label-");
  choices.push_back("é");
  choices.push_back("éé");
  auto gbnf = ChoiceToGbnf(choices);
  ASSERT_TRUE(gbnf.ok()) << gbnf.error();
  auto grammar = CompileGbnf(*gbnf);
  for (const char* choice :
       {"label-0", "label-1", "label-10", "label-19999", "label-", "é", "éé"}) {
    EXPECT_TRUE(Accepts(grammar, choice)) << choice;
  }
  for (const char* other : {"label-20000", "label", "label-01", "ééé", ""}) {
    EXPECT_FALSE(Accepts(grammar, other)) << other;
  }
}

TEST(ChoiceGrammarTest, RefusesEmptyListAndInvalidUtf8) {
  auto empty = ChoiceToGbnf({});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().find("empty"), std::string::npos);
  auto invalid = ChoiceToGbnf({"ok", "bad \xFF byte"});
  ASSERT_FALSE(invalid.ok());
  EXPECT_NE(invalid.error().find("choice 1"), std::string::npos);
}

TEST(ChoiceGrammarTest, AnyJsonObject) {
  auto grammar = CompileGbnf(*AnyJsonObjectGbnf());
  for (const char* object : {"{}", "{ }", R"({"a":1})", R"({"a": [1, 2.5e-3, "x", null]})",
                             "{\n  \"nested\": {\"deep\": {\"x\": [true, false, {}]}},\n  \"s\": "
                             "\"\\u00e9\\n\"\n}"}) {
    EXPECT_TRUE(Accepts(grammar, object)) << object;
  }
  for (const char* other : {"[]", "\"text\"", "1", "null", R"({"a":})", R"({"a" 1})", R"({a:1})",
                            R"({"a":1,})", " {}", "{} ", R"({"a":01})"}) {
    EXPECT_FALSE(Accepts(grammar, other)) << other;
  }
  // One separator between two tokens by default: a space, or a newline and an indent.
  EXPECT_TRUE(Accepts(grammar, "{\n" + std::string(20, ' ') + "}"));
  EXPECT_FALSE(Accepts(grammar, "{\n" + std::string(21, ' ') + "}"));
  for (const char* loose : {"{  }", "{\n\n}", "{ \n}", R"({"a":  1})", "{\"a\":1\n\n}"}) {
    EXPECT_FALSE(Accepts(grammar, loose)) << loose;
  }
  // whitespace_pattern: any whitespace, as asked.
  auto any_whitespace = CompileGbnf(*AnyJsonObjectGbnf(true, "[ \\n\\t]*"));
  EXPECT_TRUE(Accepts(any_whitespace, "{\n\n  \"a\" :\n\n\t1 \n}"));
  EXPECT_FALSE(Accepts(any_whitespace, " {}"));
  auto bad_pattern = AnyJsonObjectGbnf(true, "(");
  ASSERT_FALSE(bad_pattern.ok());
  EXPECT_NE(bad_pattern.error().find("whitespace_pattern"), std::string::npos);
}

TEST(ChoiceGrammarTest, AnyJsonObjectWithoutWhitespace) {
  // xgrammar's separators without any_whitespace: ", " and ": ", nothing else.
  auto grammar = CompileGbnf(*AnyJsonObjectGbnf(/*any_whitespace=*/false));
  EXPECT_TRUE(Accepts(grammar, "{}"));
  EXPECT_TRUE(Accepts(grammar, R"({"a": 1, "b": [1, {"c": null}]})"));
  EXPECT_FALSE(Accepts(grammar, R"({"a":1})"));
  EXPECT_FALSE(Accepts(grammar, R"({ "a": 1 })"));
  EXPECT_FALSE(Accepts(grammar, "{ }"));
}

}  // namespace
}  // namespace vllm
