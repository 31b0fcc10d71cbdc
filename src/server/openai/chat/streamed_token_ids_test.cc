// return_token_ids in a chat stream: the ids of a choice's chunks, joined, are all its ids.
#include "server/openai/chat/streamed_token_ids.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace vllm::server {
namespace {

using Ids = std::vector<int32_t>;

TEST(StreamedTokenIdsTest, AChunkCarriesTheIdsOfTheDeltasThatSentNone) {
  StreamedTokenIds ids(2);
  ids.Add(0, Ids{1, 2});  // held back by a parser: no chunk
  ids.Add(1, Ids{7});
  ids.Add(0, Ids{3});
  EXPECT_EQ(ids.Take(0), (Ids{1, 2, 3}));
  EXPECT_EQ(ids.Take(0), Ids{});  // a final chunk with no new token
  ids.Add(0, Ids{4});
  EXPECT_EQ(ids.Take(0), Ids{4});
  EXPECT_EQ(ids.Take(1), Ids{7});
}

TEST(StreamedTokenIdsTest, AChoiceOutOfRangeThrowsRatherThanCorrupts) {
  StreamedTokenIds ids(1);
  EXPECT_THROW(ids.Add(1, Ids{1}), std::out_of_range);
  EXPECT_THROW(ids.Take(1), std::out_of_range);
}

}  // namespace
}  // namespace vllm::server
