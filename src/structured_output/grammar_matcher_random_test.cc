// Randomized tests: random grammars over a few 1-, 2- and 3-byte characters and random
// vocabularies (tokens often cut inside a character). At every step of a random walk the mask
// must equal the brute-force one, and full-string acceptance must agree with an independent
// recognizer working on code points (a fixed-point dynamic program over substrings).
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "structured_output/gbnf_parser.h"
#include "structured_output/grammar_matcher.h"
#include "structured_output/parser_states.h"
#include "structured_output/test_vocabulary.h"

namespace vllm {
namespace {

const std::vector<std::string> kCharacters = {"a", "b", "\xC3\xA9", "\xE4\xB8\xAD"};
const std::vector<uint32_t> kCodePoints = {'a', 'b', 0xE9, 0x4E2D};
const std::vector<std::string> kClasses = {
    "[ab]", "[^a]", "[a-\\u00e9]", ".", "[\\u4e00-\\u9fff]", "[^\\u00e9\\u4e2d]"};

class RandomGrammarWriter {
 public:
  explicit RandomGrammarWriter(std::mt19937* rng) : rng_(*rng) {}

  std::string Grammar() {
    std::string text;
    for (int rule = 0; rule < kNumRules; ++rule) {
      text += (rule == 0 ? std::string("root") : "r" + std::to_string(rule)) + " ::= ";
      text += Alternatives(/*depth=*/0) + "\n";
    }
    return text;
  }

 private:
  static constexpr int kNumRules = 4;

  int Uniform(int count) { return std::uniform_int_distribution<int>(0, count - 1)(rng_); }

  std::string Alternatives(int depth) {
    const int num_alternatives = 1 + Uniform(3);
    std::string text;
    for (int i = 0; i < num_alternatives; ++i) {
      if (i > 0) text += " | ";
      const int num_items = Uniform(4);
      for (int k = 0; k < num_items; ++k) text += Item(depth) + " ";
      if (num_items == 0) text += "\"\"";
    }
    return text;
  }

  std::string Item(int depth) {
    std::string item;
    switch (Uniform(depth < 2 ? 4 : 3)) {
      case 0:
        item = "\"" + kCharacters[Uniform(4)] + (Uniform(2) ? kCharacters[Uniform(4)] : "") + "\"";
        break;
      case 1:
        item = kClasses[Uniform(static_cast<int>(kClasses.size()))];
        break;
      case 2:
        item = Uniform(kNumRules) == 0 ? "root" : "r" + std::to_string(1 + Uniform(kNumRules - 1));
        break;
      default:
        item = "(" + Alternatives(depth + 1) + ")";
        break;
    }
    static const char* kQuantifiers[] = {"", "", "", "*", "+", "?", "{0,2}", "{1,2}", "{2}"};
    return item + kQuantifiers[Uniform(9)];
  }

  std::mt19937& rng_;
};

// Whether `code_points` is a sentence of the IR grammar: derives[rule][i][j] for every
// substring, shortest first, iterated to a fixed point for rules that reach themselves without
// consuming input.
class ReferenceRecognizer {
 public:
  ReferenceRecognizer(const Grammar& grammar, const std::vector<uint32_t>& code_points)
      : grammar_(grammar), text_(code_points), n_(static_cast<int>(code_points.size())) {
    derives_.assign(grammar.rules.size() * (n_ + 1) * (n_ + 1), false);
    for (int length = 0; length <= n_; ++length) {
      for (int i = 0; i + length <= n_; ++i) {
        for (bool changed = true; changed;) {
          changed = false;
          for (size_t rule = 0; rule < grammar.rules.size(); ++rule) {
            if (Derives(static_cast<int32_t>(rule), i, i + length)) continue;
            for (const GrammarSequence& sequence : grammar.rules[rule].alternatives) {
              if (SequenceMatches(sequence, 0, i, i + length)) {
                derives_[Index(static_cast<int32_t>(rule), i, i + length)] = true;
                changed = true;
                break;
              }
            }
          }
        }
      }
    }
  }

  bool Accepts() const { return Derives(grammar_.root_rule_id, 0, n_); }

 private:
  size_t Index(int32_t rule, int i, int j) const {
    return (static_cast<size_t>(rule) * (n_ + 1) + i) * (n_ + 1) + j;
  }
  bool Derives(int32_t rule, int i, int j) const { return derives_[Index(rule, i, j)]; }

  bool SequenceMatches(const GrammarSequence& sequence, size_t k, int i, int j) const {
    if (k == sequence.size()) return i == j;
    const GrammarElement& element = sequence[k];
    if (element.kind == GrammarElement::Kind::kCharacter) {
      if (i >= j) return false;
      bool contained = false;
      for (const UnicodeRange& range : grammar_.ranges(element)) {
        contained |= range.first <= text_[i] && text_[i] <= range.last;
      }
      return contained && SequenceMatches(sequence, k + 1, i + 1, j);
    }
    for (int m = i; m <= j; ++m) {
      if (Derives(element.rule_id, i, m) && SequenceMatches(sequence, k + 1, m, j)) return true;
    }
    return false;
  }

  const Grammar& grammar_;
  const std::vector<uint32_t>& text_;
  const int n_;
  std::vector<bool> derives_;
};

TokenVocabulary RandomVocabulary(std::mt19937* rng) {
  std::string all_bytes;
  for (const std::string& character : kCharacters) all_bytes += character;
  auto uniform = [&](int count) { return std::uniform_int_distribution<int>(0, count - 1)(*rng); };
  std::vector<std::string> tokens = {"", "</s>"};
  for (int i = 0; i < 60; ++i) {
    std::string token;
    const int num_characters = 1 + uniform(3);
    for (int k = 0; k < num_characters; ++k) token += kCharacters[uniform(4)];
    // Cut at any byte: tokens may start or end inside a character.
    const int begin = uniform(2) ? uniform(static_cast<int>(token.size())) : 0;
    const int end = begin + 1 + uniform(static_cast<int>(token.size()) - begin);
    tokens.push_back(token.substr(begin, end - begin));
  }
  return MakeVocabulary(std::move(tokens), /*stop_token_ids=*/{1});
}

// Random grammars are very ambiguous, and with recursion stacks can multiply with every way to
// split the input: whether `text` makes the parser exceed its stack limits.
bool HitsStackLimit(const CompiledGrammar& grammar, std::string_view text) {
  ParserStates states(grammar.byte_grammar(), ParserStates::OptionsFor(grammar.limits()));
  int32_t set_id = states.InitialSet();
  for (char c : text) {
    set_id = states.Step(set_id, static_cast<uint8_t>(c));
    if (set_id == ParserStates::kDeadSet) {
      return states.last_failure() == ParserStates::Failure::kTooManyStacks ||
             states.last_failure() == ParserStates::Failure::kTooMuchExpansion;
    }
  }
  return false;
}

TEST(GrammarMatcherRandomTest, MasksEqualBruteForceAndAcceptanceEqualsReference) {
  std::mt19937 rng(1234);
  int num_compiled = 0;
  int num_accepted_strings = 0;
  int num_over_limit = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const std::string gbnf = RandomGrammarWriter(&rng).Grammar();
    auto vocab = IndexVocabulary(RandomVocabulary(&rng));
    Expected<std::shared_ptr<const CompiledGrammar>> compiled =
        CompiledGrammar::Compile(gbnf, vocab);
    if (!compiled.ok()) {
      // Random grammars may be left-recursive or match nothing; nothing else is expected.
      EXPECT_TRUE(compiled.error().starts_with("left recursion") ||
                  compiled.error().starts_with("the grammar matches nothing"))
          << compiled.error() << "\n"
          << gbnf;
      continue;
    }
    ++num_compiled;
    const int64_t vocab_size = vocab->vocab_size();
    GrammarMatcher matcher(*compiled);
    for (int step = 0; step < 12 && !matcher.IsTerminated(); ++step) {
      const std::vector<int32_t> allowed = MaskedTokens(matcher, vocab_size);
      ASSERT_EQ(allowed, BruteForceAllowedTokens(matcher, vocab_size))
          << "trial " << trial << " step " << step << "\n"
          << gbnf;
      std::vector<uint32_t> uncached(TokenBitmaskWords(vocab_size));
      matcher.FillNextTokenBitmaskUncached(uncached);
      ASSERT_EQ(allowed, AllowedTokens(uncached, vocab_size));
      std::vector<int32_t> text_tokens;
      for (int32_t id : allowed) {
        if (!vocab->is_stop_token(id)) text_tokens.push_back(id);
      }
      if (text_tokens.empty()) break;
      const int32_t choice =
          text_tokens[std::uniform_int_distribution<size_t>(0, text_tokens.size() - 1)(rng)];
      ASSERT_TRUE(matcher.AcceptToken(choice));
    }
    // Full-string acceptance against the reference recognizer.
    Expected<Grammar> grammar = ParseGbnf(gbnf);
    ASSERT_TRUE(grammar.ok());
    for (int sample = 0; sample < 30; ++sample) {
      std::string text;
      std::vector<uint32_t> code_points;
      const int length = std::uniform_int_distribution<int>(0, 5)(rng);
      for (int i = 0; i < length; ++i) {
        const int c = std::uniform_int_distribution<int>(0, 3)(rng);
        text += kCharacters[c];
        code_points.push_back(kCodePoints[c]);
      }
      GrammarMatcher fresh(*compiled);
      const bool accepted = fresh.AcceptString(text) && fresh.IsCompleted();
      const bool reference_accepts = ReferenceRecognizer(*grammar, code_points).Accepts();
      if (!accepted && reference_accepts && HitsStackLimit(**compiled, text)) {
        ++num_over_limit;
        continue;
      }
      ASSERT_EQ(accepted, reference_accepts) << "trial " << trial << " text `" << text << "`\n"
                                             << gbnf;
      num_accepted_strings += accepted;
    }
  }
  std::printf("%d grammars compiled, %d strings accepted, %d over the stack limit\n", num_compiled,
              num_accepted_strings, num_over_limit);
  EXPECT_GT(num_compiled, 150);
  EXPECT_GT(num_accepted_strings, 500);
  EXPECT_LT(num_over_limit, num_accepted_strings / 20);
}

}  // namespace
}  // namespace vllm
