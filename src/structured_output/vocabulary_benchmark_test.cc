// Token masks over a real vocabulary (Qwen3's 151k byte-level BPE tokens, skipped when the
// tokenizer file is missing): masks must equal the brute-force ones; the timings of cold, warm
// and cached masks in several JSON states, and of a whole constrained decode, are printed (not
// asserted: they depend on the machine).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "structured_output/grammar_matcher.h"
#include "structured_output/test_vocabulary.h"

namespace vllm {
namespace {

using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

class Qwen3VocabularyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string path = std::string(VLLM_SHARED_DIR) + "/tokenizers/qwen3/tokenizer.json";
    if (!std::filesystem::exists(path)) return;
    Clock::time_point start = Clock::now();
    std::optional<TokenVocabulary> vocabulary =
        LoadByteLevelVocabulary(path, {"<|im_end|>", "<|endoftext|>"});
    if (!vocabulary) return;
    std::printf("load tokenizer.json: %.0f ms\n", MillisecondsSince(start));
    start = Clock::now();
    vocab_ = IndexVocabulary(std::move(*vocabulary));
    std::printf("index %lld tokens (%zu trie nodes, longest %d bytes): %.0f ms\n",
                static_cast<long long>(vocab_->vocab_size()), vocab_->trie_nodes().size(),
                vocab_->max_token_length(), MillisecondsSince(start));
  }
  static void TearDownTestSuite() { vocab_.reset(); }

  void SetUp() override {
    if (vocab_ == nullptr) GTEST_SKIP() << "no Qwen3 tokenizer.json under " VLLM_SHARED_DIR;
    const Clock::time_point start = Clock::now();
    Expected<std::shared_ptr<const CompiledGrammar>> compiled =
        CompiledGrammar::Compile(kJsonGbnf, vocab_);
    ASSERT_TRUE(compiled.ok()) << compiled.error();
    std::printf("compile the JSON grammar: %.2f ms\n", MillisecondsSince(start));
    grammar_ = *compiled;
  }

  // The token whose bytes are `text`.
  int32_t TokenId(std::string_view text) const {
    for (int32_t id = 0; id < vocab_->vocab_size(); ++id) {
      if (vocab_->token_bytes(id) == text) return id;
    }
    return -1;
  }

  static inline std::shared_ptr<const IndexedVocabulary> vocab_;
  std::shared_ptr<const CompiledGrammar> grammar_;
};

TEST_F(Qwen3VocabularyTest, MasksEqualBruteForce) {
  for (const char* prefix :
       {"", "{\"name\": \"Hel", "{\"a\": [1, ", "{\"a\": 12.5", "[\"\xE4\xB8"}) {
    GrammarMatcher matcher(grammar_);
    ASSERT_TRUE(matcher.AcceptString(prefix)) << prefix;
    const std::vector<int32_t> allowed = MaskedTokens(matcher, vocab_->vocab_size());
    EXPECT_EQ(allowed, BruteForceAllowedTokens(matcher, vocab_->vocab_size())) << prefix;
    std::printf("after `%s`: %zu tokens allowed\n", prefix, allowed.size());
  }
  GrammarMatcher in_string(grammar_);
  ASSERT_TRUE(in_string.AcceptString("{\"name\": \"Hel"));
  const std::vector<int32_t> allowed = MaskedTokens(in_string, vocab_->vocab_size());
  for (const char* text : {"lo", "\"", "\",", " world", "\\n"}) {
    EXPECT_TRUE(std::binary_search(allowed.begin(), allowed.end(), TokenId(text))) << text;
  }
  for (const char* text : {"\n", "\t"}) {
    EXPECT_FALSE(std::binary_search(allowed.begin(), allowed.end(), TokenId(text))) << text;
  }
}

TEST_F(Qwen3VocabularyTest, MaskTimings) {
  const int64_t vocab_size = vocab_->vocab_size();
  std::vector<uint32_t> mask(TokenBitmaskWords(vocab_size));
  for (const char* prefix : {"", "{\"name\": \"Hel", "{\"a\": [1, ", "{\"key\": \"v\", "}) {
    GrammarMatcher matcher(grammar_);
    ASSERT_TRUE(matcher.AcceptString(prefix));
    Clock::time_point start = Clock::now();
    matcher.FillNextTokenBitmaskUncached(mask);
    const double cold_ms = MillisecondsSince(start);
    std::vector<double> warm_ms;
    for (int i = 0; i < 5; ++i) {
      start = Clock::now();
      matcher.FillNextTokenBitmaskUncached(mask);
      warm_ms.push_back(MillisecondsSince(start));
    }
    matcher.FillNextTokenBitmask(mask);  // fills the cache
    std::vector<double> cached_ms;
    for (int i = 0; i < 20; ++i) {
      start = Clock::now();
      matcher.FillNextTokenBitmask(mask);
      cached_ms.push_back(MillisecondsSince(start));
    }
    std::sort(warm_ms.begin(), warm_ms.end());
    std::sort(cached_ms.begin(), cached_ms.end());
    std::printf(
        "state after `%s`: uncached mask %.2f ms cold (fresh matcher), %.2f ms warm; cached "
        "%.4f ms (medians)\n",
        prefix, cold_ms, warm_ms[warm_ms.size() / 2], cached_ms[cached_ms.size() / 2]);
  }
}

// A bounded repetition (as JSON Schema's maxLength compiles to): each count is a different
// parser state, but the trie walk reaches each (state, byte class) pair once.
TEST_F(Qwen3VocabularyTest, BoundedStringMaskTimings) {
  Expected<std::shared_ptr<const CompiledGrammar>> compiled =
      CompiledGrammar::Compile("root ::= \"\\\"\" [^\"\\\\\\x00-\\x1F]{0,100} \"\\\"\"", vocab_);
  ASSERT_TRUE(compiled.ok()) << compiled.error();
  GrammarMatcher matcher(*compiled);
  ASSERT_TRUE(matcher.AcceptString("\"abc"));
  std::vector<uint32_t> mask(TokenBitmaskWords(vocab_->vocab_size()));
  const Clock::time_point start = Clock::now();
  matcher.FillNextTokenBitmaskUncached(mask);
  const double cold_ms = MillisecondsSince(start);
  EXPECT_EQ(AllowedTokens(mask, vocab_->vocab_size()),
            BruteForceAllowedTokens(matcher, vocab_->vocab_size()));
  std::printf("string of at most 100 characters, after 3: uncached mask %.2f ms cold\n", cold_ms);
}

// A whole decode: at each step the mask, then the longest allowed token that continues the
// target text.
TEST_F(Qwen3VocabularyTest, ConstrainedDecodeTimings) {
  const std::string target =
      "{\"id\": 12345, \"name\": \"Grace Hopper\", \"tags\": [\"compiler\", \"COBOL\", "
      "\"navy\"], \"born\": {\"year\": 1906, \"city\": \"New York\"}, \"quote\": \"It's easier "
      "to ask forgiveness than it is to get permission.\", \"score\": -0.75e2, \"unicode\": "
      "\"caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\x98\x80\", \"nested\": [[1, "
      "[2, [3]]], {\"a\": {\"b\": {\"c\": null}}}], \"ok\": true}";
  const int64_t vocab_size = vocab_->vocab_size();
  std::vector<uint32_t> mask(TokenBitmaskWords(vocab_size));
  GrammarMatcher matcher(grammar_);
  size_t position = 0;
  int num_steps = 0;
  double total_ms = 0;
  double max_ms = 0;
  while (position < target.size()) {
    const Clock::time_point start = Clock::now();
    matcher.FillNextTokenBitmask(mask);
    const double step_ms = MillisecondsSince(start);
    total_ms += step_ms;
    max_ms = std::max(max_ms, step_ms);
    ++num_steps;
    int32_t best = -1;
    for (int32_t id = 0; id < vocab_size; ++id) {
      const std::string& bytes = vocab_->token_bytes(id);
      if (bytes.empty() || ((mask[id / 32] >> (id % 32)) & 1u) == 0) continue;
      if (target.compare(position, bytes.size(), bytes) != 0) continue;
      if (best < 0 || bytes.size() > vocab_->token_bytes(best).size()) best = id;
    }
    ASSERT_GE(best, 0) << "no allowed token continues the text at byte " << position;
    ASSERT_TRUE(matcher.AcceptToken(best));
    position += vocab_->token_bytes(best).size();
  }
  EXPECT_TRUE(matcher.IsCompleted());
  matcher.FillNextTokenBitmask(mask);
  ASSERT_EQ(vocab_->stop_token_ids().size(), 2u);
  for (int32_t id : vocab_->stop_token_ids()) EXPECT_TRUE((mask[id / 32] >> (id % 32)) & 1u);
  std::printf(
      "constrained decode of %zu bytes: %d steps, mask %.3f ms mean, %.2f ms max, %zu "
      "masks cached\n",
      target.size(), num_steps, total_ms / num_steps, max_ms, grammar_->mask_cache().size());
}

}  // namespace
}  // namespace vllm
