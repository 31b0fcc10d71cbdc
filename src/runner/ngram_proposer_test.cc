#include "runner/ngram_proposer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vllm {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(NgramProposerTest, ProposesWhatFollowedTheEarliestMatch) {
  NgramProposer proposer(
      {.num_speculative_tokens = 3, .prompt_lookup_min = 1, .prompt_lookup_max = 3});
  // "1 2 3" occurs at 0 and 5; the earliest one is followed by 4 5 6.
  EXPECT_THAT(proposer.Propose(std::vector<int32_t>{1, 2, 3, 4, 5, 1, 2, 3, 7, 1, 2, 3}),
              ElementsAre(4, 5, 1));
}

TEST(NgramProposerTest, PrefersTheLongestNgramOverAnEarlierShorterOne) {
  NgramProposer proposer(
      {.num_speculative_tokens = 2, .prompt_lookup_min = 1, .prompt_lookup_max = 2});
  // The bigram "8 9" matches at 3 only; the unigram "9" would match at 0 first.
  EXPECT_THAT(proposer.Propose(std::vector<int32_t>{9, 1, 1, 8, 9, 5, 6, 8, 9}), ElementsAre(5, 6));
}

TEST(NgramProposerTest, StopsAtTheEndOfTheSequence) {
  NgramProposer proposer(
      {.num_speculative_tokens = 5, .prompt_lookup_min = 1, .prompt_lookup_max = 1});
  EXPECT_THAT(proposer.Propose(std::vector<int32_t>{3, 4, 3}), ElementsAre(4, 3));
}

TEST(NgramProposerTest, AMatchMayOverlapTheSuffix) {
  NgramProposer proposer(
      {.num_speculative_tokens = 4, .prompt_lookup_min = 3, .prompt_lookup_max = 3});
  EXPECT_THAT(proposer.Propose(std::vector<int32_t>{7, 7, 7, 7}), ElementsAre(7));
}

TEST(NgramProposerTest, NothingBelowTheMinimumLength) {
  NgramProposer proposer(
      {.num_speculative_tokens = 4, .prompt_lookup_min = 2, .prompt_lookup_max = 4});
  EXPECT_THAT(proposer.Propose(std::vector<int32_t>{1, 2, 3, 9, 3}), IsEmpty());  // only "3"
  EXPECT_THAT(proposer.Propose(std::vector<int32_t>{5}), IsEmpty());
  EXPECT_THAT(proposer.Propose(std::vector<int32_t>{}), IsEmpty());
}

}  // namespace
}  // namespace vllm
