#include "server/openai/logprobs_format.h"

#include <gtest/gtest.h>

namespace vllm::server {
namespace {

PositionLogprobs Position() {
  // Sampled token 7 (rank 3) plus the top two.
  return {{7, {-2.0f, 3, "c"}}, {4, {-0.5f, 1, "a"}}, {9, {-1.0f, 2, "bé"}}};
}

TEST(LogprobsFormatTest, SampledTokenFirstThenByRank) {
  const PositionLogprobs position = Position();
  const auto ordered = OrderedLogprobs(position, 7);
  ASSERT_EQ(ordered.size(), 3u);
  EXPECT_EQ(ordered[0].first, 7);
  EXPECT_EQ(ordered[1].first, 4);
  EXPECT_EQ(ordered[2].first, 9);
}

TEST(LogprobsFormatTest, ChatContentHasBytesAndTopLogprobs) {
  const Json logprobs = ChatLogprobs({7}, {Position()}, 2, false);
  const Json& entry = logprobs["content"][0];
  EXPECT_EQ(entry["token"], "c");
  EXPECT_FLOAT_EQ(entry["logprob"].get<float>(), -2.0f);
  EXPECT_EQ(entry["bytes"], Json::array({99}));
  ASSERT_EQ(entry["top_logprobs"].size(), 2u);
  EXPECT_EQ(entry["top_logprobs"][1]["token"], "a");
}

TEST(LogprobsFormatTest, ReturnTokensAsTokenIdsNamesTokensById) {
  const Json logprobs = ChatLogprobs({7}, {Position()}, 2, true);
  const Json& entry = logprobs["content"][0];
  EXPECT_EQ(entry["token"], "token_id:7");
  EXPECT_EQ(entry["bytes"].size(), std::string("token_id:7").size());
  EXPECT_EQ(entry["top_logprobs"][0]["token"], "token_id:7");
  EXPECT_EQ(entry["top_logprobs"][1]["token"], "token_id:4");
}

TEST(LogprobsFormatTest, PromptLogprobsKeyByTokenId) {
  const Json positions = PromptLogprobs({std::nullopt, Position()});
  EXPECT_TRUE(positions[0].is_null());
  EXPECT_EQ(positions[1]["9"]["rank"], 2);
  EXPECT_EQ(positions[1]["9"]["decoded_token"], "bé");
}

TEST(LogprobsFormatTest, CountsCharactersNotBytes) {
  EXPECT_EQ(CountCharacters("bé"), 2);
  EXPECT_EQ(CountCharacters("日本"), 2);
}

}  // namespace
}  // namespace vllm::server
