#include "server/openai/responses/event_log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vllm::server {
namespace {

// A follower that records what it gets: the events, then "<closed>".
struct Recorder {
  std::vector<std::string> received;
  ResponseEventLogs::Follower follower() {
    return [this](std::string event, bool closed) {
      received.push_back(closed ? "<closed>" : std::move(event));
    };
  }
};

TEST(ResponseEventLogsTest, ReplaysAfterStartingAfterThenFollowsUntilClosed) {
  ResponseEventLogs logs;
  logs.Create("r");
  for (const char* event : {"e0", "e1", "e2"}) logs.Append("r", event);
  Recorder late;
  ASSERT_TRUE(logs.Follow("r", 0, late.follower()).ok());
  EXPECT_EQ(late.received, (std::vector<std::string>{"e1", "e2"}));
  Recorder from_start;
  ASSERT_TRUE(logs.Follow("r", -1, from_start.follower()).ok());
  logs.Append("r", "e3");
  logs.Close("r");
  logs.Append("r", "after close");
  EXPECT_EQ(late.received, (std::vector<std::string>{"e1", "e2", "e3", "<closed>"}));
  EXPECT_EQ(from_start.received, (std::vector<std::string>{"e0", "e1", "e2", "e3", "<closed>"}));
  // A closed log still replays, then closes the follower at once.
  Recorder after_end;
  ASSERT_TRUE(logs.Follow("r", 2, after_end.follower()).ok());
  EXPECT_EQ(after_end.received, (std::vector<std::string>{"e3", "<closed>"}));
}

TEST(ResponseEventLogsTest, UnfollowedFollowersGetNothingMore) {
  ResponseEventLogs logs;
  logs.Create("r");
  Recorder gone;
  auto handle = logs.Follow("r", -1, gone.follower());
  ASSERT_TRUE(handle.ok());
  logs.Append("r", "e0");
  logs.Unfollow("r", *handle);
  logs.Append("r", "e1");
  logs.Close("r");
  EXPECT_EQ(gone.received, (std::vector<std::string>{"e0"}));
}

TEST(ResponseEventLogsTest, KeepsOnlyTheNewestEventsUnderItsByteCap) {
  ResponseEventLogs logs({.max_bytes_per_log = 10});
  logs.Create("r");
  for (const char* event : {"aaaa", "bbbb", "cccc", "dddd"}) logs.Append("r", event);
  EXPECT_EQ(logs.num_bytes(), 8u);  // events 2 and 3
  auto too_old = logs.Follow("r", 0, [](std::string, bool) {});
  ASSERT_FALSE(too_old.ok());
  EXPECT_NE(too_old.error().find("before sequence number 2 are no longer kept"), std::string::npos);
  Recorder recorder;
  ASSERT_TRUE(logs.Follow("r", 1, recorder.follower()).ok());
  EXPECT_EQ(recorder.received, (std::vector<std::string>{"cccc", "dddd"}));
}

TEST(ResponseEventLogsTest, ForgetsTheOldestLogsOverItsCountAndTotalAndEndsTheirFollowers) {
  ResponseEventLogs logs({.max_logs = 2, .max_total_bytes = 12});
  logs.Create("a");
  Recorder follower_of_a;
  ASSERT_TRUE(logs.Follow("a", -1, follower_of_a.follower()).ok());
  logs.Create("b");
  logs.Create("c");  // over the count: a goes
  EXPECT_EQ(logs.num_logs(), 2u);
  EXPECT_EQ(follower_of_a.received, (std::vector<std::string>{"<closed>"}));
  EXPECT_FALSE(logs.Follow("a", -1, [](std::string, bool) {}).ok());
  logs.Append("b", "bbbbbbbb");
  logs.Append("c", "cccccccc");  // over the byte total: b goes, c stays though alone over
  EXPECT_EQ(logs.num_logs(), 1u);
  EXPECT_EQ(logs.num_bytes(), 8u);
  auto unknown = logs.Follow("b", -1, [](std::string, bool) {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().find("has no event stream"), std::string::npos);
}

}  // namespace
}  // namespace vllm::server
