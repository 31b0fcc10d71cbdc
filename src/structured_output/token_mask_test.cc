// Tests of token masks over small hand-made vocabularies: tokens spanning rule boundaries or
// splitting a UTF-8 character, empty tokens, stop tokens, termination, and the shared mask cache.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "structured_output/grammar_matcher.h"
#include "structured_output/test_vocabulary.h"

namespace vllm {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::shared_ptr<const CompiledGrammar> Compile(std::string_view gbnf,
                                               std::shared_ptr<const IndexedVocabulary> vocab) {
  Expected<std::shared_ptr<const CompiledGrammar>> compiled =
      CompiledGrammar::Compile(gbnf, std::move(vocab));
  EXPECT_TRUE(compiled.ok()) << compiled.error();
  return compiled.ok() ? *compiled : nullptr;
}

TEST(TokenMaskTest, TokensSpanningRuleBoundaries) {
  // Ids: a 0, ab 1, b1 2, 1 3, 12 4, 2! 5, ! 6, b 7, x 8, (empty) 9.
  auto vocab = IndexVocabulary(MakeVocabulary({"a", "ab", "b1", "1", "12", "2!", "!", "b", "x", ""},
                                              /*stop_token_ids=*/{10}));
  // The stop token's id is past the token list: ignored, so no stop token at all.
  EXPECT_THAT(vocab->stop_token_ids(), IsEmpty());
  auto grammar = Compile("root ::= \"ab\" digits \"!\"\ndigits ::= [0-9]+", vocab);
  ASSERT_NE(grammar, nullptr);
  GrammarMatcher matcher(grammar);
  const int64_t vocab_size = grammar->vocab_size();
  EXPECT_THAT(MaskedTokens(matcher, vocab_size), ElementsAre(0, 1));
  ASSERT_TRUE(matcher.AcceptToken(0));
  EXPECT_THAT(MaskedTokens(matcher, vocab_size), ElementsAre(2, 7));
  ASSERT_TRUE(matcher.AcceptToken(2));
  EXPECT_THAT(MaskedTokens(matcher, vocab_size), ElementsAre(3, 4, 5, 6));
  EXPECT_FALSE(matcher.AcceptToken(8));
  EXPECT_FALSE(matcher.AcceptToken(9));  // empty
  ASSERT_TRUE(matcher.AcceptToken(5));
  EXPECT_TRUE(matcher.IsCompleted());
  EXPECT_TRUE(matcher.IsTerminated());
  EXPECT_THAT(MaskedTokens(matcher, vocab_size), IsEmpty());
}

TEST(TokenMaskTest, TokensSplittingUtf8Characters) {
  const std::vector<std::string> tokens = {
      "\xC3",                  // 0: é's lead byte
      "\xA9",                  // 1: é's continuation byte
      "\xC3\xA9",              // 2: é
      "\xA9\xE4",              // 3: the end of é and the start of a CJK character
      "\xE4\xB8",              // 4: U+4E00..U+4E3F cut short
      "\xAD",                  // 5: a continuation byte
      "\xC3\xA9\xE4\xB8\xAD",  // 6: é中
      "\xC3\xA8",              // 7: è
      "\xE3",                  // 8: the lead of U+3000..U+3FFF, none in range
      "\xE4\x80",              // 9: U+4000..U+403F, none in range
      "\xE4",                  // 10: the lead of U+4000..U+4FFF
      "\xB8\xAD",              // 11
      "\xE9\xBF\xBF",          // 12: U+9FFF
  };
  auto vocab = IndexVocabulary(MakeVocabulary(tokens));
  auto grammar = Compile("root ::= \"é\" [\\u4E00-\\u9FFF]", vocab);
  ASSERT_NE(grammar, nullptr);
  GrammarMatcher matcher(grammar);
  const int64_t vocab_size = grammar->vocab_size();
  EXPECT_THAT(MaskedTokens(matcher, vocab_size), ElementsAre(0, 2, 6));
  ASSERT_TRUE(matcher.AcceptToken(0));
  EXPECT_THAT(MaskedTokens(matcher, vocab_size), ElementsAre(1, 3));
  ASSERT_TRUE(matcher.AcceptToken(3));
  EXPECT_THAT(MaskedTokens(matcher, vocab_size), ElementsAre(11));
  EXPECT_FALSE(matcher.AcceptToken(5));
  ASSERT_TRUE(matcher.AcceptToken(11));
  EXPECT_TRUE(matcher.IsTerminated());

  GrammarMatcher after_e(grammar);
  ASSERT_TRUE(after_e.AcceptToken(2));
  EXPECT_THAT(MaskedTokens(after_e, vocab_size), ElementsAre(4, 10, 12));
}

TEST(TokenMaskTest, StopTokensOnlyWhenComplete) {
  // Ids: a 0, b 1, (empty) 2, </s> 3, <eos> 4; the stop tokens 3 and 4 (4 listed twice).
  auto vocab = IndexVocabulary(MakeVocabulary({"a", "b", "", "</s>", "<eos>"}, {3, 4, 4}));
  EXPECT_THAT(vocab->stop_token_ids(), ElementsAre(3, 4));
  const int64_t vocab_size = vocab->vocab_size();

  auto optional_a = Compile("root ::= \"a\"*", vocab);
  ASSERT_NE(optional_a, nullptr);
  GrammarMatcher matcher(optional_a);
  EXPECT_THAT(MaskedTokens(matcher, vocab_size), ElementsAre(0, 3, 4));
  ASSERT_TRUE(matcher.AcceptToken(0));
  EXPECT_THAT(MaskedTokens(matcher, vocab_size), ElementsAre(0, 3, 4));
  EXPECT_FALSE(matcher.IsTerminated());
  ASSERT_TRUE(matcher.AcceptToken(4));
  EXPECT_TRUE(matcher.IsTerminated());
  EXPECT_TRUE(matcher.IsCompleted());
  // After termination only the stop tokens.
  EXPECT_THAT(MaskedTokens(matcher, vocab_size), ElementsAre(3, 4));
  EXPECT_FALSE(matcher.AcceptToken(0));
  EXPECT_FALSE(matcher.AcceptString("a"));
  EXPECT_TRUE(matcher.AcceptToken(3));

  auto at_least_one = Compile("root ::= \"a\"+", vocab);
  ASSERT_NE(at_least_one, nullptr);
  GrammarMatcher plus(at_least_one);
  EXPECT_THAT(MaskedTokens(plus, vocab_size), ElementsAre(0));
  EXPECT_FALSE(plus.AcceptToken(3));
  ASSERT_TRUE(plus.AcceptToken(0));
  EXPECT_THAT(MaskedTokens(plus, vocab_size), ElementsAre(0, 3, 4));

  // A stop token's bytes never count as text, even where the grammar allows them.
  auto stop_text = Compile("root ::= \"</s>\" \"b\"", vocab);
  ASSERT_NE(stop_text, nullptr);
  GrammarMatcher text(stop_text);
  EXPECT_THAT(MaskedTokens(text, vocab_size), IsEmpty());
  EXPECT_FALSE(text.AcceptToken(3));
  ASSERT_TRUE(text.AcceptString("</s>"));
  EXPECT_THAT(MaskedTokens(text, vocab_size), ElementsAre(1));
}

TEST(TokenMaskTest, BitmaskSizesAndOutOfRangeIds) {
  std::vector<std::string> tokens(40, "z");
  tokens[33] = "a";
  auto vocab = IndexVocabulary(MakeVocabulary(tokens));
  auto grammar = Compile("root ::= \"a\"", vocab);
  ASSERT_NE(grammar, nullptr);
  GrammarMatcher matcher(grammar);
  ASSERT_EQ(TokenBitmaskWords(40), 2);
  std::vector<uint32_t> mask(3, 0xDEADBEEFu);
  matcher.FillNextTokenBitmask(mask);
  EXPECT_EQ(mask[0], 0u);
  EXPECT_EQ(mask[1], 1u << 1);
  EXPECT_EQ(mask[2], 0xDEADBEEFu);  // past the vocabulary: not written
  std::vector<uint32_t> short_mask(1, 0xDEADBEEFu);
  matcher.FillNextTokenBitmask(short_mask);
  EXPECT_EQ(short_mask[0], 0u);
  EXPECT_FALSE(matcher.AcceptToken(-1));
  EXPECT_FALSE(matcher.AcceptToken(40));
  EXPECT_TRUE(matcher.AcceptToken(33));
}

TEST(TokenMaskTest, CachedMasksEqualComputedOnesAcrossMatchers) {
  std::vector<std::string> tokens = {"{", "}",    "\"", "a", "ab",  "\\", "\\n", "\"}",
                                     "é", "\xC3", " ",  ":", "\":", ",",  "1",   "12"};
  auto vocab = IndexVocabulary(MakeVocabulary(tokens, {}));
  auto grammar = Compile(
      "root ::= \"{\" (pair (\",\" pair)*)? \"}\"\n"
      "pair ::= string \":\" [0-9]+\n"
      "string ::= \"\\\"\" ([^\"\\\\] | \"\\\\\" [n\"])* \"\\\"\"\n",
      vocab);
  ASSERT_NE(grammar, nullptr);
  const int64_t vocab_size = grammar->vocab_size();
  const std::vector<int32_t> path = {0, 2, 3, 4, 8, 6, 12, 14, 13, 2, 2, 11, 15, 1};
  for (int round = 0; round < 2; ++round) {
    GrammarMatcher matcher(grammar);
    for (int32_t token_id : path) {
      std::vector<uint32_t> uncached(TokenBitmaskWords(vocab_size));
      matcher.FillNextTokenBitmaskUncached(uncached);
      EXPECT_EQ(MaskedTokens(matcher, vocab_size), AllowedTokens(uncached, vocab_size));
      EXPECT_EQ(MaskedTokens(matcher, vocab_size), BruteForceAllowedTokens(matcher, vocab_size));
      ASSERT_TRUE(matcher.AcceptToken(token_id)) << "round " << round << " token " << token_id;
    }
    EXPECT_TRUE(matcher.IsTerminated());
  }
  // The string interior after "a", "ab", "é" is one state: fewer entries than steps.
  EXPECT_LT(grammar->mask_cache().size(), path.size());
}

TEST(TokenMaskTest, MatchersOfOneGrammarRunOnSeveralThreads) {
  std::vector<std::string> tokens;
  for (char c = ' '; c <= '~'; ++c) tokens.push_back(std::string(1, c));
  for (const char* text : {"{\"", "\":", "\", \"", "true", "null", "12", "[1", "],", "\"}"}) {
    tokens.push_back(text);
  }
  auto vocab = IndexVocabulary(MakeVocabulary(tokens));
  auto grammar = Compile(kJsonGbnf, vocab);
  ASSERT_NE(grammar, nullptr);
  const std::string text = R"({"a": [1, 12, true], "bc": {"d": null, "e": "f g"}})";
  // The masks along the text, one token (the longest allowed that fits) at a time.
  auto walk = [&](std::vector<std::vector<int32_t>>* masks) {
    GrammarMatcher matcher(grammar);
    for (size_t position = 0; position < text.size();) {
      masks->push_back(MaskedTokens(matcher, grammar->vocab_size()));
      int32_t best = -1;
      for (int32_t id : masks->back()) {
        if (text.compare(position, tokens[id].size(), tokens[id]) == 0 &&
            (best < 0 || tokens[id].size() > tokens[best].size())) {
          best = id;
        }
      }
      if (best < 0 || !matcher.AcceptToken(best)) return;
      position += tokens[best].size();
    }
    masks->push_back(MaskedTokens(matcher, grammar->vocab_size()));
  };
  std::vector<std::vector<int32_t>> expected;
  walk(&expected);
  ASSERT_GT(expected.size(), 20u);
  std::vector<std::vector<std::vector<int32_t>>> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) threads.emplace_back([&walk, &result] { walk(&result); });
  for (std::thread& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_EQ(result, expected);
}

}  // namespace
}  // namespace vllm
