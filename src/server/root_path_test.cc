#include "server/root_path.h"

#include <gtest/gtest.h>

namespace vllm::server {
namespace {

TEST(RootPathTest, StripsTheRootPathAsStarletteDoes) {
  EXPECT_EQ(StripRootPath("/api/v1/models", "/api"), "/v1/models");
  EXPECT_EQ(StripRootPath("/api/v1/completions?x=1", "/api"), "/v1/completions?x=1");
  // Requests without the prefix are still served.
  EXPECT_EQ(StripRootPath("/v1/models", "/api"), "/v1/models");
  // The prefix must end at a segment's end.
  EXPECT_EQ(StripRootPath("/apiv1/models", "/api"), "/apiv1/models");
  // The root path alone routes nowhere.
  EXPECT_EQ(StripRootPath("/api", "/api"), "");
  EXPECT_EQ(StripRootPath("/api?x", "/api"), "?x");
  // A query that merely contains the prefix is not a path.
  EXPECT_EQ(StripRootPath("/health?/api", "/api"), "/health?/api");
  EXPECT_EQ(StripRootPath("/health", ""), "/health");
}

}  // namespace
}  // namespace vllm::server
