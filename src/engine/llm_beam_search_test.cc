// LLM::BeamSearch on the demo model: one beam is greedy decoding, four beams find a sequence at
// least as likely, runs repeat exactly, and several prompts search independently of each other.
#include <gtest/gtest.h>

#include <stdexcept>

#include "engine/llm_engine.h"
#include "engine/test_engine_args.h"
#include "tokenizer/tokenizer.h"
#include "vllm/llm.h"

namespace vllm {
namespace {

constexpr int kMaxTokens = 24;

BeamSearchParams Beams(int beam_width) {
  BeamSearchParams params;
  params.beam_width = beam_width;
  params.max_tokens = kMaxTokens;
  params.ignore_eos = true;  // every sequence has the same length: scores order as cum_logprob
  return params;
}

class LLMBeamSearchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { llm_ = new LLM(StoriesArgs()); }
  static void TearDownTestSuite() { delete llm_; }
  static LLM* llm_;
};
LLM* LLMBeamSearchTest::llm_ = nullptr;

TEST_F(LLMBeamSearchTest, OneBeamIsGreedy) {
  SamplingParams greedy = Greedy(kMaxTokens);
  greedy.ignore_eos = true;
  greedy.logprobs = 0;
  const RequestOutput expected = llm_->Generate({"Once upon a time"}, greedy, false)[0];
  const std::vector<BeamSearchOutput> outputs = llm_->BeamSearch({"Once upon a time"}, Beams(1));
  ASSERT_EQ(outputs.size(), 1u);
  ASSERT_EQ(outputs[0].sequences.size(), 1u);
  const BeamSearchSequence& beam = outputs[0].sequences[0];
  std::vector<int32_t> tokens = expected.prompt_token_ids;
  tokens.insert(tokens.end(), expected.outputs[0].token_ids.begin(),
                expected.outputs[0].token_ids.end());
  EXPECT_EQ(beam.tokens, tokens);
  EXPECT_NEAR(beam.cum_logprob, expected.outputs[0].cumulative_logprob, 1e-4);
  EXPECT_EQ(beam.text, "Once upon a time" + expected.outputs[0].text);
  EXPECT_EQ(beam.logprobs.size(), static_cast<size_t>(kMaxTokens));
  EXPECT_EQ(beam.finish_reason, "");
}

TEST_F(LLMBeamSearchTest, FourBeamsFindALikelierSequenceAndRepeat) {
  const std::vector<BeamSearchOutput> one = llm_->BeamSearch({"Once upon a time"}, Beams(1));
  const std::vector<BeamSearchOutput> four = llm_->BeamSearch({"Once upon a time"}, Beams(4));
  ASSERT_EQ(four[0].sequences.size(), 4u);
  EXPECT_GE(four[0].sequences[0].cum_logprob, one[0].sequences[0].cum_logprob);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_GE(four[0].sequences[i - 1].cum_logprob, four[0].sequences[i].cum_logprob);
    EXPECT_NE(four[0].sequences[i - 1].tokens, four[0].sequences[i].tokens);
  }
  const std::vector<BeamSearchOutput> again = llm_->BeamSearch({"Once upon a time"}, Beams(4));
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(again[0].sequences[i].tokens, four[0].sequences[i].tokens);
    EXPECT_EQ(again[0].sequences[i].cum_logprob, four[0].sequences[i].cum_logprob);
  }
}

TEST_F(LLMBeamSearchTest, PromptsSearchIndependently) {
  const std::vector<int32_t> token_prompt =
      llm_->engine().tokenizer().Encode("The little dog", /*add_special_tokens=*/true);
  const auto together = llm_->BeamSearch({"Once upon a time", token_prompt}, Beams(3));
  const auto first = llm_->BeamSearch({"Once upon a time"}, Beams(3));
  const auto second = llm_->BeamSearch({token_prompt}, Beams(3));
  ASSERT_EQ(together.size(), 2u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(together[0].sequences[i].tokens, first[0].sequences[i].tokens);
    EXPECT_EQ(together[1].sequences[i].tokens, second[0].sequences[i].tokens);
  }
}

TEST_F(LLMBeamSearchTest, RefusesBadParams) {
  BeamSearchParams params = Beams(0);
  EXPECT_THROW(llm_->BeamSearch({"Once"}, params), std::invalid_argument);
  params = Beams(11);
  EXPECT_THROW(llm_->BeamSearch({"Once"}, params), std::invalid_argument);
}

}  // namespace
}  // namespace vllm
