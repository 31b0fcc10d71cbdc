#include "server/openai/responses/store.h"

#include <gtest/gtest.h>

namespace vllm::server {
namespace {

StoredResponse Response(const char* status, size_t padding = 0) {
  return {{{"status", status}, {"pad", std::string(padding, 'x')}}, Json::array()};
}

TEST(ResponseStoreTest, KeepsAtMostItsCountEvictingTheLeastRecentlyUsed) {
  ResponseStore store({.max_responses = 2});
  store.Put("a", Response("completed"));
  store.Put("b", Response("completed"));
  ASSERT_TRUE(store.Get("a"));  // a is now more recent than b
  store.Put("c", Response("completed"));
  EXPECT_EQ(store.size(), 2u);
  EXPECT_TRUE(store.Get("a"));
  EXPECT_FALSE(store.Get("b"));
  EXPECT_TRUE(store.Get("c"));
}

TEST(ResponseStoreTest, KeepsAtMostItsBytesButAlwaysTheNewest) {
  ResponseStore store({.max_responses = 100, .max_bytes = 1000});
  store.Put("a", Response("completed", 600));
  store.Put("b", Response("completed", 600));
  EXPECT_FALSE(store.Get("a"));
  EXPECT_TRUE(store.Get("b"));
  EXPECT_LE(store.num_bytes(), 1000u);
  store.Put("huge", Response("completed", 5000));
  EXPECT_TRUE(store.Get("huge"));
  EXPECT_EQ(store.size(), 1u);
}

TEST(ResponseStoreTest, CancelsOnlyBackgroundResponsesAndKeepsThemCancelled) {
  ResponseStore store;
  Json response;
  EXPECT_EQ(store.Cancel("nope", &response)->message, "Response with id 'nope' not found.");
  EXPECT_EQ(store.Cancel("nope", &response)->status, boost::beast::http::status::not_found);
  store.Put("done", Response("completed"));
  EXPECT_EQ(store.Cancel("done", &response)->message, "Cannot cancel a synchronous response.");
  store.Put("bg", Response("queued"));
  ASSERT_FALSE(store.Cancel("bg", &response));
  EXPECT_EQ(response["status"], "cancelled");
  store.Put("bg", Response("completed"));  // the aborted request's late result
  EXPECT_EQ(store.Get("bg")->response["status"], "cancelled");
}

}  // namespace
}  // namespace vllm::server
