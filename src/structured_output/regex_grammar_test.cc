// Tests of the regex compiler through the grammar engine: the produced grammar accepts exactly
// what std::regex (ECMAScript) fully matches on a table of patterns and strings, the Python-only
// syntax, the JSON-string form used by JSON Schema `pattern`, refused constructs, and patterns
// that make backtracking engines explode.
#include "structured_output/regex_grammar.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "structured_output/grammar_matcher.h"
#include "structured_output/test_vocabulary.h"

namespace vllm {
namespace {

std::shared_ptr<const CompiledGrammar> CompileRegex(const std::string& pattern) {
  auto gbnf = RegexToGbnf(pattern);
  EXPECT_TRUE(gbnf.ok()) << pattern << ": " << gbnf.error();
  return gbnf.ok() ? CompileGbnf(*gbnf) : nullptr;
}

struct RegexCase {
  std::string pattern;
  std::vector<std::string> texts;
};

TEST(RegexGrammarTest, AgreesWithStdRegexOnFullMatches) {
  const std::vector<std::string> common = {
      "",  "a",  "b",   "ab",  "aa", "abc",  "aab", "abab",   "123", "a1", "A", "_",
      " ", "\t", "a b", "x.y", "\n", "aaaa", "ba",  "abcabc", "-",   "]",  "\\"};
  const std::vector<RegexCase> cases = {
      {"abc", {}},
      {"a|b|", {}},
      {"a*", {}},
      {"a+b?", {}},
      {"(ab)+", {}},
      {"(?:a|b)*c?", {}},
      {"a{2}", {}},
      {"a{1,3}", {}},
      {"a{2,}", {}},
      {"a*?b+?", {}},
      {"[a-c]+", {}},
      {"[^a-c]", {}},
      {"[\\]\\\\-]", {}},
      {"[a\\-z]", {}},
      {"\\d+", {"0", "0123456789", "12a"}},
      {"\\D", {"1"}},
      {"\\w+", {"hello_World9", "hello world"}},
      {"\\W", {"!", "~"}},
      {"\\s*", {" \t\n\r\f\v", "  x"}},
      {"\\S+", {"a_b", "a b"}},
      {"x\\.y", {"xzy"}},
      {".", {"~", "ab"}},
      {".*", {"anything at all", "two\nlines"}},
      {"\\x41\\u0042\\t", {"AB\t", "AB"}},
      {"[\\d\\s]+", {"1 2\t3", "1x"}},
      {"[^\\d]+", {"abc", "a1"}},
      {"(a|ab)(c|bcd)(d*)", {"abcd", "abcdd", "acd"}},
      {"^(\\+|-)?\\d{1,3}(,\\d{3})*(\\.\\d+)?$", {"+1,234.5", "-12", "1,23", "1234", "12.", ".5"}},
      {"[A-Z][a-z]{2,5} \\d{4}", {"Hello 2024", "Hi 2024", "Helloooo 2024", "Hello 224"}},
      {"(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?", {"0", "01", "10.5e-3", "1e", "3.14"}},
      {"\\(\\[\\{\\}\\]\\)\\*\\+\\?\\|\\^\\$\\/", {"([{}])*+?|^$/"}},
      {"(a(b(c(d)?)?)?)?", {"abcd", "abd"}},
      {"((a|b)(c|d)){2}", {"acbd", "acb", "adadad"}},
  };
  for (const RegexCase& test : cases) {
    auto grammar = CompileRegex(test.pattern);
    ASSERT_NE(grammar, nullptr) << test.pattern;
    const std::regex reference(test.pattern, std::regex::ECMAScript);
    std::vector<std::string> texts = common;
    texts.insert(texts.end(), test.texts.begin(), test.texts.end());
    for (const std::string& text : texts) {
      EXPECT_EQ(Accepts(grammar, text), std::regex_match(text, reference))
          << "pattern " << test.pattern << " on \"" << text << "\"";
    }
  }
}

// A random pattern over the letters a b c: literals, classes, groups, alternation, quantifiers.
// Only pieces that cannot match the empty string get quantifiers: std::regex backtracks
// exponentially on quantified empty-matching groups (the grammar engine is tested on those in
// CatastrophicPatternsAreLinear). Sets *nullable when the pattern matches the empty string.
std::string RandomPattern(std::mt19937& random, int depth, bool* nullable) {
  const int kind = static_cast<int>(random() % (depth > 2 ? 3 : 5));
  std::string atom;
  *nullable = false;
  if (kind <= 1) {
    atom = std::string(1, "abc"[random() % 3]);
  } else if (kind == 2) {
    atom = std::vector<std::string>{"[ab]", "[^b]", ".", "[a-c]", "[^a-b]"}[random() % 5];
  } else {
    const int num_alternatives = 1 + static_cast<int>(random() % 3);
    for (int i = 0; i < num_alternatives; ++i) {
      if (i > 0) atom += "|";
      const int length = static_cast<int>(random() % 3);
      bool branch_nullable = true;
      for (int k = 0; k < length; ++k) {
        bool piece_nullable = false;
        atom += RandomPattern(random, depth + 1, &piece_nullable);
        branch_nullable = branch_nullable && piece_nullable;
      }
      *nullable = *nullable || branch_nullable;
    }
    atom = (random() % 2 ? "(" : "(?:") + atom + ")";
  }
  if (*nullable) return atom;
  static const std::vector<std::string> kQuantifiers = {"",    "",      "",     "*",  "+",     "?",
                                                        "{2}", "{1,3}", "{2,}", "*?", "{0,2}?"};
  const std::string& quantifier = kQuantifiers[random() % kQuantifiers.size()];
  *nullable =
      quantifier == "*" || quantifier == "?" || quantifier == "*?" || quantifier == "{0,2}?";
  return atom + quantifier;
}

TEST(RegexGrammarTest, AgreesWithStdRegexOnRandomPatterns) {
  std::mt19937 random(20240611);
  std::vector<std::string> texts = {""};
  for (size_t begin = 0, length = 1; length <= 5; ++length) {
    const size_t end = texts.size();
    for (size_t i = begin; i < end; ++i) {
      for (const char letter : {'a', 'b', 'c'}) texts.push_back(texts[i] + letter);
    }
    begin = end;
  }
  for (int round = 0; round < 200; ++round) {
    std::string pattern;
    const int length = 1 + static_cast<int>(random() % 4);
    for (int i = 0; i < length; ++i) {
      bool nullable = false;
      pattern += RandomPattern(random, 0, &nullable);
    }
    auto grammar = CompileRegex(pattern);
    ASSERT_NE(grammar, nullptr) << pattern;
    const std::regex reference(pattern, std::regex::ECMAScript);
    for (const std::string& text : texts) {
      ASSERT_EQ(Accepts(grammar, text), std::regex_match(text, reference))
          << "pattern " << pattern << " on \"" << text << "\"";
    }
  }
}

TEST(RegexGrammarTest, PythonSyntax) {
  auto named = CompileRegex("(?P<year>\\d{4})-(?<month>\\d\\d)(?#a comment)");
  EXPECT_TRUE(Accepts(named, "2024-05"));
  EXPECT_FALSE(Accepts(named, "2024-5"));
  auto up_to = CompileRegex("a{,2}b");  // Python's {,n}
  EXPECT_TRUE(Accepts(up_to, "b"));
  EXPECT_TRUE(Accepts(up_to, "aab"));
  EXPECT_FALSE(Accepts(up_to, "aaab"));
  auto literal_brace = CompileRegex("a{x}|{");  // not a quantifier: literal text
  EXPECT_TRUE(Accepts(literal_brace, "a{x}"));
  EXPECT_TRUE(Accepts(literal_brace, "{"));
  auto anchors = CompileRegex("\\Aab\\Z");
  EXPECT_TRUE(Accepts(anchors, "ab"));
  auto bracket_first = CompileRegex("[]a]+");  // `]` first in a class is a literal
  EXPECT_TRUE(Accepts(bracket_first, "]a]"));
  auto dot = CompileRegex("a.c");  // `.` is anything but a newline
  EXPECT_TRUE(Accepts(dot, "a\rc"));
  EXPECT_FALSE(Accepts(dot, "a\nc"));
  auto unicode = CompileRegex("[à-ÿ]+\\u00e9\\U0001F600\\u{1F601}");
  EXPECT_TRUE(Accepts(unicode, "àÿé😀😁"));
  EXPECT_FALSE(Accepts(unicode, "aé😀😁"));
  auto empty = CompileRegex("");
  EXPECT_TRUE(Accepts(empty, ""));
  EXPECT_FALSE(Accepts(empty, "a"));
}

TEST(RegexGrammarTest, RefusesWhatItCannotMatch) {
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"(a)\\1", "backreferences"},
      {"(?P<x>a)(?P=x)", "backreferences"},
      {"a(?=b)", "lookahead"},
      {"a(?!b)", "lookahead"},
      {"(?<=a)b", "lookbehind"},
      {"(?<!a)b", "lookbehind"},
      {"\\bword\\b", "word boundaries"},
      {"(?i)abc", "inline flags"},
      {"(?>a+)", "atomic"},
      {"a*+", "possessive"},
      {"a**", "multiple repeat"},
      {"*a", "nothing to repeat"},
      {"a{3,2}", "quantifier {3,2}: the minimum is above"},
      {"(ab", "missing ')'"},
      {"ab)", "unbalanced"},
      {"[ab", "unterminated"},
      {"[z-a]", "bad character range"},
      {"\\p{L}", "Unicode property"},
      {"\\q", "bad escape"},
      {"a^b", "'^'"},
      {"a$b", "'$'"},
      {"a\\", "lone backslash"},
      {"\\xZZ", "hex escape"},
      {"\\uD800", "surrogate"},
      {"a{100001}", "quantifier {100001}: a count above 100000"},
      // A count too large for any integer is quoted as written, not as where it saturates.
      {"a{18446744073709551616}", "quantifier {18446744073709551616}"},
      {"a{99999999999999999999,1}", "quantifier {99999999999999999999,1}: the minimum"},
      {"(a{1000}){1000}", "expands to more than"},
      {std::string(200, '(') + std::string(200, ')'), "nest deeper"},
      {"\xC3", "UTF-8"},
  };
  for (const auto& [pattern, expected] : refused) {
    auto gbnf = RegexToGbnf(pattern);
    ASSERT_FALSE(gbnf.ok()) << pattern;
    EXPECT_NE(gbnf.error().find(expected), std::string::npos) << pattern << ": " << gbnf.error();
  }
}

TEST(RegexGrammarTest, CatastrophicPatternsAreLinear) {
  const auto start = std::chrono::steady_clock::now();
  auto nested = CompileRegex("(a+)+$");
  EXPECT_TRUE(Accepts(nested, std::string(200, 'a')));
  EXPECT_FALSE(Accepts(nested, std::string(200, 'a') + "b"));
  auto alternation = CompileRegex("(a|a)*b");
  EXPECT_TRUE(Accepts(alternation, std::string(200, 'a') + "b"));
  EXPECT_FALSE(Accepts(alternation, std::string(200, 'a')));
  auto nullable = CompileRegex("(a*)*b");
  EXPECT_TRUE(Accepts(nullable, std::string(200, 'a') + "b"));
  EXPECT_FALSE(Accepts(nullable, std::string(200, 'a') + "c"));
  auto optional_star = CompileRegex("(a?)*(a|)+c");
  EXPECT_TRUE(Accepts(optional_star, "aaac"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// The pattern inside a JSON string literal (JSON Schema `pattern`).
std::shared_ptr<const CompiledGrammar> CompileJsonStringRegex(const std::string& pattern) {
  auto expression = RegexToGbnfExpression(pattern, RegexTextForm::kJsonStringBody);
  EXPECT_TRUE(expression.ok()) << pattern << ": " << expression.error();
  if (!expression.ok()) return nullptr;
  return CompileGbnf("root ::= \"\\\"\" " + *expression + " \"\\\"\"\n");
}

TEST(RegexGrammarTest, JsonStringFormEscapesWhatJsonEscapes) {
  auto quote = CompileJsonStringRegex("a\"b\\\\c");  // the value a"b\c
  EXPECT_TRUE(Accepts(quote, R"("a\"b\\c")"));
  EXPECT_FALSE(Accepts(quote, R"("a"b\c")"));
  auto slash = CompileJsonStringRegex("[/]");
  EXPECT_TRUE(Accepts(slash, R"("/")"));
  EXPECT_TRUE(Accepts(slash, R"("\/")"));
  auto any = CompileJsonStringRegex(".*");  // anything but a newline
  EXPECT_TRUE(Accepts(any, R"("tab\there \"quoted\" back\\slash \u001f")"));
  EXPECT_TRUE(Accepts(any, R"("\u001F \r")"));
  EXPECT_FALSE(Accepts(any, R"("two\nlines")"));
  EXPECT_FALSE(Accepts(any, R"("two\u000alines")"));
  EXPECT_FALSE(Accepts(any, "\"raw\ttab\""));  // control characters must be escaped
  EXPECT_FALSE(Accepts(any, R"("unescaped"quote")"));
  auto newline = CompileJsonStringRegex("a\\nb");
  EXPECT_TRUE(Accepts(newline, R"("a\nb")"));
  EXPECT_TRUE(Accepts(newline, R"("a\u000Ab")"));
  EXPECT_FALSE(Accepts(newline, "\"a\nb\""));
  auto not_letters = CompileJsonStringRegex("[^a-z]+");
  EXPECT_TRUE(Accepts(not_letters, R"("\"\\\b\/1")"));
  EXPECT_FALSE(Accepts(not_letters, R"("1a")"));
}

}  // namespace
}  // namespace vllm
