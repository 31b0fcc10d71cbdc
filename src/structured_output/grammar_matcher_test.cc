// Tests of the matcher over bytes: which strings it accepts as complete sentences or as prefixes,
// for literals, classes, `.`, quantifiers, nullable and recursive rules, ambiguity, JSON, and
// what happens at its limits.
#include "structured_output/grammar_matcher.h"

#include <gtest/gtest.h>

#include <string>

#include "structured_output/parser_states.h"
#include "structured_output/test_vocabulary.h"

namespace vllm {
namespace {

// Grammars of these tests; matchers over a vocabulary without tokens (strings only).
std::shared_ptr<const CompiledGrammar> CompileForTest(std::string_view gbnf,
                                                      const GrammarLimits& limits = {}) {
  static const std::shared_ptr<const IndexedVocabulary> vocabulary = IndexVocabulary({});
  Expected<std::shared_ptr<const CompiledGrammar>> compiled =
      CompiledGrammar::Compile(gbnf, vocabulary, limits);
  EXPECT_TRUE(compiled.ok()) << compiled.error();
  return compiled.ok() ? *compiled : nullptr;
}

// The whole string is a sentence of the grammar.
bool Matches(const std::shared_ptr<const CompiledGrammar>& grammar, std::string_view text) {
  GrammarMatcher matcher(grammar);
  return matcher.AcceptString(text) && matcher.IsCompleted();
}

// The string is a prefix of a sentence.
bool IsPrefix(const std::shared_ptr<const CompiledGrammar>& grammar, std::string_view text) {
  GrammarMatcher matcher(grammar);
  return matcher.AcceptString(text);
}

TEST(GrammarMatcherTest, Literals) {
  auto grammar = CompileForTest("root ::= \"hello\" \" \" \"world\"");
  ASSERT_NE(grammar, nullptr);
  EXPECT_TRUE(Matches(grammar, "hello world"));
  EXPECT_FALSE(Matches(grammar, "hello worl"));
  EXPECT_TRUE(IsPrefix(grammar, "hello worl"));
  EXPECT_TRUE(IsPrefix(grammar, ""));
  EXPECT_FALSE(IsPrefix(grammar, "hello world!"));
  EXPECT_FALSE(IsPrefix(grammar, "help"));
  EXPECT_FALSE(Matches(grammar, ""));
}

TEST(GrammarMatcherTest, ClassesAndNegatedClasses) {
  auto grammar = CompileForTest("root ::= [a-c0-9_] [^a-z\\n] [\\-x]");
  ASSERT_NE(grammar, nullptr);
  EXPECT_TRUE(Matches(grammar, "a--"));
  EXPECT_TRUE(Matches(grammar, "9Zx"));
  EXPECT_TRUE(Matches(grammar, "_\xE2\x82\xAC-"));  // U+20AC, a 3-byte character, is not in a-z
  EXPECT_FALSE(Matches(grammar, "d--"));
  EXPECT_FALSE(Matches(grammar, "aq-"));
  EXPECT_FALSE(Matches(grammar, "a\n-"));
  EXPECT_FALSE(Matches(grammar, "a-y"));
}

TEST(GrammarMatcherTest, DotMatchesOneCharacterOfAnyUtf8Length) {
  auto grammar = CompileForTest("root ::= \"<\" . \">\"");
  ASSERT_NE(grammar, nullptr);
  for (const char* text : {"<a>", "<\n>", "<\xC3\xA9>", "<\xE4\xB8\xAD>", "<\xF0\x9F\x98\x80>",
                           "<\xF4\x8F\xBF\xBF>"}) {
    EXPECT_TRUE(Matches(grammar, text)) << text;
  }
  EXPECT_FALSE(Matches(grammar, "<ab>"));
  EXPECT_FALSE(Matches(grammar, "<>"));
  EXPECT_FALSE(IsPrefix(grammar, "<\xC3\xA9\xA9"));  // a stray continuation byte
  EXPECT_FALSE(IsPrefix(grammar, "<\xC0\x80"));      // overlong
  EXPECT_FALSE(IsPrefix(grammar, "<\xED\xA0\x80"));  // a surrogate
  EXPECT_FALSE(IsPrefix(grammar, "<\xF4\x90"));      // past U+10FFFF
  EXPECT_FALSE(IsPrefix(grammar, "<\xFF"));
  EXPECT_TRUE(IsPrefix(grammar, "<\xF0\x9F\x98"));  // a character cut short
}

TEST(GrammarMatcherTest, MultiByteClassRanges) {
  // Greek lowercase alpha..omega, and CJK U+4E00..U+9FFF.
  auto grammar = CompileForTest("root ::= [\\u03B1-\\u03C9]+ [\\u4E00-\\u9FFF]");
  ASSERT_NE(grammar, nullptr);
  EXPECT_TRUE(Matches(grammar, "αβω中"));
  EXPECT_TRUE(Matches(grammar, "ω\xE9\xBF\xBF"));   // U+9FFF
  EXPECT_FALSE(Matches(grammar, "αΩ中"));           // capital omega
  EXPECT_FALSE(Matches(grammar, "α\xE3\x80\x80"));  // U+3000
  EXPECT_FALSE(Matches(grammar, "α\xEA\x80\x80"));  // U+A000
}

TEST(GrammarMatcherTest, Quantifiers) {
  auto grammar =
      CompileForTest("root ::= \"a\"* \"b\"+ \"c\"? \"d\"{2} \"e\"{1,3} \"f\"{2,} \"g\"{,2}");
  ASSERT_NE(grammar, nullptr);
  EXPECT_TRUE(Matches(grammar, "bddeff"));
  EXPECT_TRUE(Matches(grammar, "aaabbbcddeeeffffgg"));
  EXPECT_FALSE(Matches(grammar, "ddeff"));      // b+ needs one
  EXPECT_FALSE(Matches(grammar, "bcceff"));     // c? at most one, d{2} exactly two
  EXPECT_FALSE(Matches(grammar, "bddeeeeff"));  // e{1,3}
  EXPECT_FALSE(Matches(grammar, "bddef"));      // f{2,}
  EXPECT_FALSE(Matches(grammar, "bddeffggg"));  // g{,2}
  auto repeated = CompileForTest("root ::= (\"ab\" | \"c\"){2,4}");
  ASSERT_NE(repeated, nullptr);
  EXPECT_FALSE(Matches(repeated, "ab"));
  EXPECT_TRUE(Matches(repeated, "abc"));
  EXPECT_TRUE(Matches(repeated, "ccabab"));
  EXPECT_FALSE(Matches(repeated, "ccababc"));
  auto literal_star = CompileForTest("root ::= \"ab\"* \"!\"");
  ASSERT_NE(literal_star, nullptr);
  EXPECT_TRUE(Matches(literal_star, "abab!"));
  EXPECT_FALSE(Matches(literal_star, "aba!"));
}

TEST(GrammarMatcherTest, NullableRules) {
  auto grammar = CompileForTest("root ::= a* b?\na ::= \"a\" | \"\"\nb ::= \"b\"");
  ASSERT_NE(grammar, nullptr);
  EXPECT_TRUE(Matches(grammar, ""));
  EXPECT_TRUE(Matches(grammar, "aaa"));
  EXPECT_TRUE(Matches(grammar, "aab"));
  EXPECT_TRUE(Matches(grammar, "b"));
  EXPECT_FALSE(Matches(grammar, "ba"));
  EXPECT_FALSE(Matches(grammar, "bb"));
  auto empty = CompileForTest("root ::= \"\"");
  ASSERT_NE(empty, nullptr);
  GrammarMatcher matcher(empty);
  EXPECT_TRUE(matcher.IsCompleted());
  EXPECT_TRUE(matcher.IsTerminated());
  EXPECT_FALSE(matcher.AcceptString("x"));
}

TEST(GrammarMatcherTest, NestedRecursion) {
  auto grammar = CompileForTest(
      "root ::= expr\n"
      "expr ::= term (\"+\" term)*\n"
      "term ::= [0-9]+ | \"(\" expr \")\"\n");
  ASSERT_NE(grammar, nullptr);
  EXPECT_TRUE(Matches(grammar, "1+(2+(3+4))+5"));
  EXPECT_TRUE(Matches(grammar, "((((((7))))))"));
  EXPECT_FALSE(Matches(grammar, "((1)"));
  EXPECT_FALSE(Matches(grammar, "(1))"));
  EXPECT_FALSE(IsPrefix(grammar, "1+)"));
  const std::string deep = std::string(500, '(') + "1" + std::string(500, ')');
  EXPECT_TRUE(Matches(grammar, deep));
  EXPECT_FALSE(Matches(grammar, deep + ")"));
}

TEST(GrammarMatcherTest, CyclesOfTailCallsTerminate) {
  auto unit_cycle = CompileForTest("root ::= a\na ::= b | \"x\"\nb ::= a");
  ASSERT_NE(unit_cycle, nullptr);
  EXPECT_TRUE(Matches(unit_cycle, "x"));
  EXPECT_FALSE(IsPrefix(unit_cycle, "xx"));
  auto star_of_nullable = CompileForTest("root ::= (\"a\"? \"\")* \"b\"");
  ASSERT_NE(star_of_nullable, nullptr);
  EXPECT_TRUE(Matches(star_of_nullable, "b"));
  EXPECT_TRUE(Matches(star_of_nullable, "aaab"));
  EXPECT_FALSE(Matches(star_of_nullable, "aaa"));
}

TEST(GrammarMatcherTest, LongBoundedRepetition) {
  auto grammar = CompileForTest("root ::= [a-z]{0,100000} \".\"");
  ASSERT_NE(grammar, nullptr);
  GrammarMatcher matcher(grammar);
  for (int i = 0; i < 100000; ++i) ASSERT_TRUE(matcher.AcceptString("q")) << i;
  EXPECT_FALSE(matcher.AcceptString("q"));
  EXPECT_TRUE(matcher.AcceptString("."));
  EXPECT_TRUE(matcher.IsTerminated());
}

TEST(GrammarMatcherTest, AmbiguousGrammarsStaySmall) {
  auto same_twice = CompileForTest("root ::= (\"a\" | \"a\")* \"b\"");
  ASSERT_NE(same_twice, nullptr);
  EXPECT_TRUE(Matches(same_twice, std::string(2000, 'a') + "b"));
  EXPECT_FALSE(Matches(same_twice, std::string(2000, 'a')));
  // Equal stacks are one: after any number of `a`s, the stacks are the two `a` alternatives and
  // the `b`, and the state is the same one.
  ParserStates states(same_twice->byte_grammar(), ParserStates::OptionsFor({}));
  const int32_t initial = states.InitialSet();
  EXPECT_EQ(states.num_stacks(initial), 3u);
  const int32_t after_a = states.Step(initial, 'a');
  EXPECT_EQ(after_a, initial);
  auto one_or_two = CompileForTest("root ::= (\"a\" | \"aa\")*");
  ASSERT_NE(one_or_two, nullptr);
  GrammarMatcher matcher(one_or_two);
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(matcher.AcceptString("a")) << i;
  EXPECT_TRUE(matcher.IsCompleted());
  EXPECT_FALSE(matcher.AcceptString("b"));
  auto nested_stars = CompileForTest("root ::= ((\"a\"*)*)* \"b\"");
  ASSERT_NE(nested_stars, nullptr);
  EXPECT_TRUE(Matches(nested_stars, std::string(1000, 'a') + "b"));
}

TEST(GrammarMatcherTest, RejectedStringLeavesStateUnchanged) {
  auto grammar = CompileForTest("root ::= \"abc\" | \"abd\"");
  ASSERT_NE(grammar, nullptr);
  GrammarMatcher matcher(grammar);
  ASSERT_TRUE(matcher.AcceptString("a"));
  EXPECT_FALSE(matcher.AcceptString("bx"));
  EXPECT_FALSE(matcher.AcceptString("bce"));
  EXPECT_TRUE(matcher.AcceptString("b"));
  EXPECT_FALSE(matcher.IsCompleted());
  EXPECT_TRUE(matcher.AcceptString("d"));
  EXPECT_TRUE(matcher.IsCompleted());
  EXPECT_TRUE(matcher.IsTerminated());
}

TEST(GrammarMatcherTest, CopiesAreIndependent) {
  auto grammar = CompileForTest("root ::= \"ab\" | \"ac\"");
  ASSERT_NE(grammar, nullptr);
  GrammarMatcher matcher(grammar);
  ASSERT_TRUE(matcher.AcceptString("a"));
  GrammarMatcher copy = matcher;
  ASSERT_TRUE(copy.AcceptString("b"));
  EXPECT_TRUE(copy.IsCompleted());
  EXPECT_FALSE(matcher.IsCompleted());
  GrammarMatcher fresh(grammar);
  fresh = copy;
  EXPECT_TRUE(fresh.IsCompleted());
  EXPECT_TRUE(matcher.AcceptString("c"));
}

TEST(GrammarMatcherTest, JsonGrammar) {
  auto grammar = CompileForTest(kJsonGbnf);
  ASSERT_NE(grammar, nullptr);
  EXPECT_TRUE(Matches(grammar, R"({"a": [1, -2.5e+3, true, null, "x\"\u00e9é"], "b": {}})"));
  EXPECT_TRUE(Matches(grammar, "[ ]"));
  EXPECT_TRUE(Matches(grammar, "0"));
  EXPECT_FALSE(Matches(grammar, "01"));
  EXPECT_FALSE(Matches(grammar, R"({"a" 1})"));
  EXPECT_FALSE(Matches(grammar, R"({"a": 1,})"));
  EXPECT_FALSE(IsPrefix(grammar, "\"tab\there\""));
  EXPECT_FALSE(IsPrefix(grammar, R"("\x")"));
  EXPECT_TRUE(IsPrefix(grammar, R"({"key": [1, 2)"));
  std::string nested;
  for (int i = 0; i < 100; ++i) nested += "[";
  nested += "1";
  for (int i = 0; i < 100; ++i) nested += "]";
  EXPECT_TRUE(Matches(grammar, nested));
  EXPECT_FALSE(Matches(grammar, nested.substr(1)));
}

TEST(GrammarMatcherTest, TooManyStacksFailsTheByteCleanly) {
  // After n `a`s, 2^n return stacks (each `a` may close with `b` or with `c`).
  auto grammar = CompileForTest("root ::= x\nx ::= \"a\" x \"b\" | \"a\" x \"c\" | \"\"",
                                {.max_parse_stacks = 64});
  ASSERT_NE(grammar, nullptr);
  GrammarMatcher matcher(grammar);
  ASSERT_TRUE(matcher.AcceptString("aaaa"));
  EXPECT_FALSE(matcher.AcceptString("aaaaaaaaaaaaaaaa"));
  EXPECT_TRUE(matcher.AcceptString("bcbc"));  // the state before the refused string
  EXPECT_TRUE(matcher.IsCompleted());
}

TEST(GrammarMatcherTest, StateMemoryStaysBounded) {
  // Every byte makes new stacks (the count of open `(` is in the stack), so the memoized states
  // keep growing and get compacted.
  auto grammar = CompileForTest("root ::= x\nx ::= \"(\" x \")\" | [a-z]*",
                                {.max_parser_state_bytes = 1 << 16});
  ASSERT_NE(grammar, nullptr);
  GrammarMatcher matcher(grammar);
  for (int i = 0; i < 20000; ++i) ASSERT_TRUE(matcher.AcceptString("(")) << i;
  ASSERT_TRUE(matcher.AcceptString("abc"));
  EXPECT_LT(matcher.parser_state_bytes(), 4u << 20);
  for (int i = 0; i < 20000; ++i) ASSERT_TRUE(matcher.AcceptString(")")) << i;
  EXPECT_TRUE(matcher.IsCompleted());
  EXPECT_TRUE(matcher.IsTerminated());
}

}  // namespace
}  // namespace vllm
