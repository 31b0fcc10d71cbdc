// The stream events of background streamed responses (background: true with stream: true),
// kept so that clients can come and go while generation runs on: the creating request and
// each GET /v1/responses/{id}?stream=true&starting_after=N are followers, which get the kept
// events after sequence number N and then each new one until the log closes.
//
// Memory is bounded: a log keeps at most max_bytes_per_log of its newest events (a follower
// asking for older ones gets a 400), and all logs together at most max_logs and max_total_bytes;
// past those the oldest-created logs are forgotten, their followers ended. vLLM keeps every
// event of every background response for the server's life.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/expected.h"

namespace vllm::server {

class ResponseEventLogs {
 public:
  struct Options {
    size_t max_logs = 1024;
    size_t max_bytes_per_log = size_t{1} << 20;
    size_t max_total_bytes = size_t{64} << 20;
  };
  // Gets each event (its whole `event: ...\ndata: ...\n\n` text) in order, then one call with
  // `closed` set and no event when the log has no more. Called with the logs' lock held: it
  // must only hand the event on (post it to its connection's strand).
  using Follower = std::function<void(std::string event, bool closed)>;

  ResponseEventLogs() : ResponseEventLogs(Options{}) {}
  explicit ResponseEventLogs(Options options) : options_(options) {}

  // Starts the log of response `id`, its first event to come numbered 0.
  void Create(const std::string& id);
  // Appends the event numbered next; a no-op once the log is closed or forgotten.
  void Append(const std::string& id, std::string event);
  // No more events: followers get their last call and are dropped.
  void Close(const std::string& id);
  // Replays the kept events numbered after `starting_after` (-1: all) to `follower`, then
  // follows the log. Returns a handle for Unfollow; a 400 for an id with no log (not a
  // background stream, or forgotten) and for events no longer kept.
  Expected<uint64_t> Follow(const std::string& id, int64_t starting_after, Follower follower);
  void Unfollow(const std::string& id, uint64_t handle);

  size_t num_logs() const;
  size_t num_bytes() const;

 private:
  struct Log {
    std::deque<std::string> events;
    int64_t first_sequence_number = 0;  // of events.front()
    size_t num_bytes = 0;
    bool closed = false;
    std::map<uint64_t, Follower> followers;
    std::list<std::string>::iterator age;  // in creation_order_
  };

  void DropOldestEvent(Log& log);
  void Forget(std::unordered_map<std::string, Log>::iterator it);

  const Options options_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Log> logs_;
  std::list<std::string> creation_order_;  // oldest first
  size_t total_bytes_ = 0;
  uint64_t next_handle_ = 0;
};

}  // namespace vllm::server
