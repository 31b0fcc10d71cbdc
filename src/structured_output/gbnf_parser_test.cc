// Tests of the GBNF parser: the IR it builds, quantifier lowering, and every kind of error with
// its line and column; plus the compile-time checks (left recursion, limits).
#include "structured_output/gbnf_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "structured_output/grammar_analysis.h"
#include "structured_output/grammar_matcher.h"

namespace vllm {
namespace {

using ::testing::HasSubstr;

std::string ParseError(std::string_view text, const GrammarLimits& limits = {}) {
  Expected<Grammar> grammar = ParseGbnf(text, limits);
  return grammar.ok() ? "(parsed)" : grammar.error();
}

std::string CompileError(std::string_view text, const GrammarLimits& limits = {}) {
  Expected<std::shared_ptr<const CompiledGrammar>> compiled =
      CompiledGrammar::Compile(text, IndexVocabulary({}), limits);
  return compiled.ok() ? "(compiled)" : compiled.error();
}

TEST(GbnfParserTest, ParsesRulesAlternativesAndReferences) {
  Expected<Grammar> grammar = ParseGbnf(
      "root ::= greeting \" \" name # a comment\n"
      "greeting ::= \"hi\" | \"hello\"\n"
      "name ::= [a-z]\n");
  ASSERT_TRUE(grammar.ok()) << grammar.error();
  ASSERT_EQ(grammar->rules.size(), 3u);
  const GrammarRule& root = grammar->rules[grammar->root_rule_id];
  EXPECT_EQ(root.name, "root");
  ASSERT_EQ(root.alternatives.size(), 1u);
  ASSERT_EQ(root.alternatives[0].size(), 3u);
  EXPECT_EQ(root.alternatives[0][0].kind, GrammarElement::Kind::kRuleRef);
  EXPECT_EQ(grammar->rules[root.alternatives[0][0].rule_id].name, "greeting");
  EXPECT_EQ(grammar->rules[root.alternatives[0][0].rule_id].alternatives.size(), 2u);
  const GrammarElement& space = root.alternatives[0][1];
  ASSERT_EQ(space.kind, GrammarElement::Kind::kCharacter);
  EXPECT_THAT(grammar->ranges(space), ::testing::ElementsAre(UnicodeRange{' ', ' '}));
}

TEST(GbnfParserTest, RuleSpansLinesUntilTheNextRuleName) {
  Expected<Grammar> grammar = ParseGbnf(
      "root ::= \"a\"\n"
      "   \"b\"\n"
      "  | \"c\"\n"
      "other ::= \"d\"\n");
  ASSERT_TRUE(grammar.ok()) << grammar.error();
  const GrammarRule& root = grammar->rules[grammar->root_rule_id];
  ASSERT_EQ(root.alternatives.size(), 2u);
  EXPECT_EQ(root.alternatives[0].size(), 2u);
  EXPECT_EQ(root.alternatives[1].size(), 1u);
}

TEST(GbnfParserTest, ClassesAreNormalizedNegatedAndExcludeSurrogates) {
  Expected<Grammar> grammar = ParseGbnf("root ::= [c-ea-b\\x41] [^\\x00-\\U0010FFFF] [^a] .");
  ASSERT_TRUE(grammar.ok()) << grammar.error();
  const GrammarSequence& sequence = grammar->rules[grammar->root_rule_id].alternatives[0];
  ASSERT_EQ(sequence.size(), 4u);
  EXPECT_THAT(grammar->ranges(sequence[0]),
              ::testing::ElementsAre(UnicodeRange{'A', 'A'}, UnicodeRange{'a', 'e'}));
  EXPECT_TRUE(grammar->ranges(sequence[1]).empty());
  EXPECT_THAT(grammar->ranges(sequence[2]),
              ::testing::ElementsAre(UnicodeRange{0, 'a' - 1}, UnicodeRange{'b', 0xD7FF},
                                     UnicodeRange{0xE000, 0x10FFFF}));
  EXPECT_THAT(grammar->ranges(sequence[3]),
              ::testing::ElementsAre(UnicodeRange{0, 0xD7FF}, UnicodeRange{0xE000, 0x10FFFF}));
}

TEST(GbnfParserTest, EscapesAndUtf8Literals) {
  Expected<Grammar> grammar =
      ParseGbnf("root ::= \"\\n\\r\\t\\\\\\\"\\[\\]\\-\\/\\x41\\u00e9\\U0001F600é\"");
  ASSERT_TRUE(grammar.ok()) << grammar.error();
  const GrammarSequence& sequence = grammar->rules[grammar->root_rule_id].alternatives[0];
  const std::vector<uint32_t> expected = {'\n', '\r', '\t', '\\', '"',     '[', ']',
                                          '-',  '/',  'A',  0xE9, 0x1F600, 0xE9};
  ASSERT_EQ(sequence.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_THAT(grammar->ranges(sequence[i]),
                ::testing::ElementsAre(UnicodeRange{expected[i], expected[i]}))
        << i;
  }
}

TEST(GbnfParserTest, BoundedRepetitionIsLinearInItsCounts) {
  Expected<Grammar> grammar = ParseGbnf("root ::= \"ab\"{2,5}");
  ASSERT_TRUE(grammar.ok()) << grammar.error();
  // root ::= item item O1; item ::= "ab"; O1 ::= item O2 | ""; O2 ::= item O3 | ""; O3 ::= item |
  // ""
  const GrammarSequence& root = grammar->rules[grammar->root_rule_id].alternatives[0];
  ASSERT_EQ(root.size(), 3u);
  EXPECT_EQ(root[0].rule_id, root[1].rule_id);
  EXPECT_EQ(grammar->rules.size(), 5u);
  EXPECT_EQ(grammar->rules[root[2].rule_id].alternatives.size(), 2u);
  EXPECT_TRUE(grammar->rules[root[2].rule_id].is_helper());
  EXPECT_EQ(grammar->UserRuleName(root[2].rule_id), "root");
}

TEST(GbnfParserTest, SyntaxErrorsSayLineAndColumn) {
  EXPECT_EQ(ParseError("root \"a\""), "line 1, column 6: expected `::=` after rule name `root`");
  // A name that `::=` does not follow continues the rule above.
  EXPECT_EQ(ParseError("root ::= \"a\"\nfoo = \"b\""),
            "line 2, column 5: unexpected character `=`");
  EXPECT_EQ(ParseError("root ::= \"a\"\n\nx ::= \"abc"),
            "line 3, column 7: unterminated string literal");
  EXPECT_EQ(ParseError("root ::= \"ab\ncd\""), "line 1, column 10: unterminated string literal");
  EXPECT_EQ(ParseError("root ::= \"ab\\"), "line 1, column 10: unterminated string literal");
  EXPECT_EQ(ParseError("root ::= [abc"), "line 1, column 10: unterminated character class");
  EXPECT_EQ(ParseError("root ::= \"a\\q\""), "line 1, column 12: unknown escape `\\q`");
  EXPECT_EQ(ParseError("root ::= \"\\x4\""), "line 1, column 11: escape `\\x` needs 2 hex digits");
  EXPECT_EQ(ParseError("root ::= \"\\U00110000\""), "line 1, column 11: code point past U+10FFFF");
  EXPECT_EQ(ParseError("root ::= \"\\uD800\""),
            "line 1, column 11: surrogate code point (not a character)");
  EXPECT_EQ(ParseError("root ::= [z-a]"), "line 1, column 11: character range out of order");
  EXPECT_EQ(ParseError("root ::= (\"a\" | \"b\""),
            "line 1, column 20: expected `)` to close the group opened at line 1, column 10");
  EXPECT_EQ(ParseError("root ::= \"a\" )"), "line 1, column 14: unexpected `)` with no group open");
  EXPECT_EQ(ParseError("root ::= * \"a\""),
            "line 1, column 10: quantifier `*` with nothing to repeat");
  EXPECT_EQ(ParseError("root ::= \"a\"{3,2}"), "line 1, column 13: repetition `{m,n}` with m > n");
  EXPECT_EQ(ParseError("root ::= \"a\"{x}"),
            "line 1, column 13: expected `{m}`, `{m,}`, `{m,n}` or `{,n}`");
  EXPECT_EQ(ParseError("root ::= \"a\" ; "), "line 1, column 14: unexpected character `;`");
  EXPECT_EQ(ParseError("::= \"a\""), "line 1, column 1: expected a rule name");
  EXPECT_EQ(ParseError("root ::= \"\xC3\""), "line 1, column 11: invalid UTF-8");
  EXPECT_EQ(ParseError("root ::= \"\xE0\x80\x80\""), "line 1, column 11: invalid UTF-8");
  // Columns count characters, not bytes.
  EXPECT_EQ(ParseError("root ::= \"é\" ;"), "line 1, column 14: unexpected character `;`");
}

TEST(GbnfParserTest, RuleErrors) {
  EXPECT_EQ(ParseError("root ::= item\n"), "undefined rule `item` (line 1, column 10)");
  EXPECT_EQ(ParseError("root ::= \"a\"\nroot ::= \"b\""),
            "line 2, column 1: rule `root` is defined twice");
  EXPECT_EQ(ParseError("start ::= \"a\""), "grammar has no `root` rule");
  EXPECT_EQ(ParseError(""), "grammar has no `root` rule");
}

TEST(GbnfParserTest, LimitsGiveErrors) {
  EXPECT_EQ(ParseError("root ::= \"x\"{1000000}"),
            "line 1, column 14: repetition count too large (at most 100000)");
  EXPECT_EQ(ParseError("root ::= \"x\"{2,1000000}"),
            "line 1, column 16: repetition count too large (at most 100000)");
  EXPECT_THAT(ParseError("root ::= \"x\"{900}"), "(parsed)");
  EXPECT_THAT(ParseError("root ::= \"x\"{900} \"y\"{900}", {.max_grammar_elements = 1000}),
              HasSubstr("grammar too large: more than 1000 elements"));
  // The default limit: 2^20 elements.
  EXPECT_THAT(ParseError("root ::= x{100000} x{100000} x{100000} x{100000} x{100000} "
                         "x{100000} x{100000} x{100000} x{100000} x{100000} x{100000}\n"
                         "x ::= \"x\""),
              HasSubstr("grammar too large: more than 1048576 elements"));
  // A repeated group is a rule reference: nested counts add up, they do not multiply.
  EXPECT_EQ(ParseError("root ::= (\"ab\"{1000}){1000}"), "(parsed)");
  EXPECT_THAT(ParseError("root ::= \"x\"{99999999999999999999999}"),
              HasSubstr("repetition count too large"));
  EXPECT_THAT(ParseError(std::string(100, 'x'), {.max_grammar_bytes = 99}),
              "grammar too large: 100 bytes (at most 99)");
  const std::string deep =
      "root ::= " + std::string(100000, '(') + "\"a\"" + std::string(100000, ')');
  EXPECT_THAT(ParseError(deep), HasSubstr("groups nested more than 512 deep"));
  const std::string nested = "root ::= " + std::string(500, '(') + "\"a\"" + std::string(500, ')');
  EXPECT_EQ(ParseError(nested), "(parsed)");
}

TEST(GbnfParserTest, LeftRecursionIsRefused) {
  EXPECT_EQ(CompileError("root ::= expr\nexpr ::= expr \"+\" \"x\" | \"x\""),
            "left recursion in rule `expr`");
  EXPECT_EQ(CompileError("root ::= a\na ::= b \"x\"\nb ::= a | \"y\""),
            "left recursion in rule `a`");
  // Through a nullable prefix.
  EXPECT_EQ(CompileError("root ::= \"\"? empty root \"x\" | \"y\"\nempty ::= [a]?"),
            "left recursion in rule `root`");
  // A repetition of something that can be empty is a tail call, not left recursion.
  EXPECT_EQ(CompileError("root ::= (\"a\"?)* \"b\""), "(compiled)");
  EXPECT_EQ(CompileError("root ::= a\na ::= b | \"x\"\nb ::= a"), "(compiled)");
  // Right recursion is fine.
  EXPECT_EQ(CompileError("root ::= \"x\" root | \"\""), "(compiled)");
}

TEST(GbnfParserTest, CompileErrors) {
  EXPECT_EQ(CompileError("root ::= [^\\x00-\\U0010FFFF]"),
            "the grammar matches nothing (rule `root` derives no string)");
  EXPECT_EQ(CompileError("root ::= x\nx ::= x"),
            "the grammar matches nothing (rule `root` derives no string)");
  std::string many = "root ::= \"a0\"";
  for (int i = 1; i < 5000; ++i) many += " | \"a" + std::to_string(i) + "\"";
  EXPECT_EQ(CompileError(many),
            "grammar too ambiguous: its start needs more than 4096 parse stacks");
  EXPECT_EQ(CompileError(many, {.max_parse_stacks = 10000}), "(compiled)");
  EXPECT_EQ(CompileError("root ::= \"a\"", {.max_grammar_bytes = 3}),
            "grammar too large: 12 bytes (at most 3)");
  EXPECT_EQ(CompiledGrammar::Compile("root ::= \"a\"", nullptr).error(),
            "no vocabulary to compile the grammar against");
}

TEST(GbnfParserTest, RandomEditsOfAGrammarNeverCrash) {
  const std::string base =
      "root ::= value\n"
      "value ::= \"{\" ws (pair (\",\" ws pair)*)? \"}\" | [0-9]{1,3} | \"\\\"\" [^\"\\\\]* "
      "\"\\\"\"\n"
      "pair ::= [a-z]+ \":\" ws value # a comment\n"
      "ws ::= ([ \\t\\n] | \"\\u00e9\")?\n";
  ASSERT_EQ(CompileError(base), "(compiled)");
  const std::string alphabet = "()[]{}|*+?^-\\\"#:=.,0123456789 \nabxyz\xC3\xA9";
  std::mt19937 rng(99);
  int num_compiled = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text = base;
    const int num_edits = 1 + static_cast<int>(rng() % 4);
    for (int edit = 0; edit < num_edits; ++edit) {
      const size_t at = rng() % (text.size() + 1);
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          text.insert(text.begin() + at, c);
          break;
        case 1:
          if (at < text.size()) text.erase(at, 1);
          break;
        default:
          if (at < text.size()) text[at] = c;
          break;
      }
    }
    Expected<std::shared_ptr<const CompiledGrammar>> compiled =
        CompiledGrammar::Compile(text, IndexVocabulary({}));
    if (!compiled.ok()) {
      EXPECT_FALSE(compiled.error().empty());
      continue;
    }
    ++num_compiled;
    GrammarMatcher matcher(*compiled);
    for (const char* input : {"{ab:1, c:{}}", "\"x\\\"", "12", "{\xC3\xA9"}) {
      GrammarMatcher copy = matcher;
      copy.AcceptString(input);
    }
  }
  EXPECT_GT(num_compiled, 300);
}

}  // namespace
}  // namespace vllm
