#include "dist/thread_communicator.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

namespace vllm::dist {
namespace {

// What a rank brings to a collective: its input buffer, its size and the root it names.
struct Post {
  const void* data = nullptr;
  int64_t count = 0;
  int root = 0;
};

// The state the ranks share: posts, the all-reduce result, a generation barrier and the
// point-to-point mailboxes.
class Group {
 public:
  Group(int size, ThreadCommunicatorOptions options)
      : size_(size), options_(options), posts_(size), mailboxes_(size * size) {}

  int size() const { return size_; }
  Post& post(int rank) { return posts_[rank]; }
  std::vector<float>& reduced() { return reduced_; }
  // Set by the last rank into a collective when the posts disagree; read after the barrier.
  const std::string& mismatch() const { return mismatch_; }

  // Waits until every rank has arrived; the last one first runs `on_last` (posts all written).
  Status Arrive(int rank, const char* operation, const std::function<void()>& on_last = {}) {
    std::unique_lock lock(mutex_);
    if (broken_) return Broken(rank, operation);
    const uint64_t generation = generation_;
    if (++num_arrived_ == size_) {
      num_arrived_ = 0;
      mismatch_.clear();
      if (on_last) on_last();
      ++generation_;
      changed_.notify_all();
      return Status::Ok();
    }
    const bool done = changed_.wait_for(lock, options_.timeout,
                                        [&] { return generation_ != generation || broken_; });
    if (generation_ != generation) return Status::Ok();
    if (!done) {
      broken_ = true;
      changed_.notify_all();
      return Error{"rank " + std::to_string(rank) + ": " + operation + " timed out after " +
                   std::to_string(options_.timeout.count()) + " ms waiting for the other ranks"};
    }
    return Broken(rank, operation);
  }

  // Leaves posts that disagree on `what` as the collective's mismatch (call from on_last).
  void CheckSame(const char* what, int64_t Post::*field) {
    for (int r = 1; r < size_; ++r) {
      if (posts_[r].*field != posts_[0].*field) {
        mismatch_ = std::string("ranks disagree on ") + what + ": rank 0 has " +
                    std::to_string(posts_[0].*field) + ", rank " + std::to_string(r) + " has " +
                    std::to_string(posts_[r].*field);
        return;
      }
    }
  }
  void CheckSameRoot() {
    for (int r = 1; r < size_; ++r) {
      if (posts_[r].root != posts_[0].root) {
        mismatch_ = "ranks disagree on the root: rank 0 names " + std::to_string(posts_[0].root) +
                    ", rank " + std::to_string(r) + " names " + std::to_string(posts_[r].root);
        return;
      }
    }
  }

  void Send(int source, int dest, const void* bytes, int64_t num_bytes) {
    const auto* begin = static_cast<const uint8_t*>(bytes);
    std::lock_guard lock(mutex_);
    mailboxes_[source * size_ + dest].emplace_back(begin, begin + num_bytes);
    changed_.notify_all();
  }

  Status Receive(int dest, int source, void* bytes, int64_t num_bytes) {
    std::unique_lock lock(mutex_);
    std::deque<std::vector<uint8_t>>& mailbox = mailboxes_[source * size_ + dest];
    const bool arrived =
        changed_.wait_for(lock, options_.timeout, [&] { return !mailbox.empty() || broken_; });
    if (mailbox.empty()) {
      if (arrived) return Broken(dest, "Receive");
      broken_ = true;
      changed_.notify_all();
      return Error{"rank " + std::to_string(dest) + ": Receive from rank " +
                   std::to_string(source) + " timed out after " +
                   std::to_string(options_.timeout.count()) + " ms"};
    }
    std::vector<uint8_t> message = std::move(mailbox.front());
    mailbox.pop_front();
    if (static_cast<int64_t>(message.size()) != num_bytes) {
      return Error{"rank " + std::to_string(dest) + ": Receive expected " +
                   std::to_string(num_bytes) + " bytes from rank " + std::to_string(source) +
                   ", got " + std::to_string(message.size())};
    }
    if (num_bytes > 0) std::memcpy(bytes, message.data(), num_bytes);
    return Status::Ok();
  }

 private:
  static Status Broken(int rank, const char* operation) {
    return Error{"rank " + std::to_string(rank) + ": " + operation +
                 ": another rank timed out earlier; the group is unusable"};
  }

  const int size_;
  const ThreadCommunicatorOptions options_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int num_arrived_ = 0;
  uint64_t generation_ = 0;
  bool broken_ = false;
  std::string mismatch_;
  std::vector<Post> posts_;     // [size]
  std::vector<float> reduced_;  // the all-reduce in progress: [count]
  // [source * size + dest]: messages in the order sent
  std::vector<std::deque<std::vector<uint8_t>>> mailboxes_;
};

class ThreadCommunicator : public Communicator {
 public:
  ThreadCommunicator(std::shared_ptr<Group> group, int rank)
      : group_(std::move(group)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return group_->size(); }

  // Each rank sums its share of the elements over all ranks' buffers, in rank order, into the
  // shared result, which every rank then copies: one sum per element, so identical bits.
  Status AllReduceSum(float* values, int64_t count) override {
    if (count < 0) return Error{"AllReduceSum: negative count " + std::to_string(count)};
    group_->post(rank_) = {values, count, 0};
    VLLM_RETURN_IF_ERROR(group_->Arrive(rank_, "AllReduceSum", [&] {
      group_->CheckSame("the AllReduceSum count", &Post::count);
      if (group_->mismatch().empty()) group_->reduced().resize(count);
    }));
    if (!group_->mismatch().empty()) return Error{"AllReduceSum: " + group_->mismatch()};
    const int num_ranks = size();
    const int64_t begin = count * rank_ / num_ranks;
    const int64_t end = count * (rank_ + 1) / num_ranks;
    float* reduced = group_->reduced().data();
    for (int64_t i = begin; i < end; ++i) {
      float sum = static_cast<const float*>(group_->post(0).data)[i];
      for (int r = 1; r < num_ranks; ++r) sum += static_cast<const float*>(group_->post(r).data)[i];
      reduced[i] = sum;
    }
    // After this barrier no rank reads the posts; `reduced` is resized only once every rank has
    // copied it out and arrived at the next collective.
    VLLM_RETURN_IF_ERROR(group_->Arrive(rank_, "AllReduceSum"));
    std::copy(reduced, reduced + count, values);
    return Status::Ok();
  }

  Status Broadcast(void* bytes, int64_t num_bytes, int root) override {
    if (root < 0 || root >= size()) return Error{"Broadcast: no rank " + std::to_string(root)};
    if (num_bytes < 0) return Error{"Broadcast: negative size " + std::to_string(num_bytes)};
    group_->post(rank_) = {bytes, num_bytes, root};
    VLLM_RETURN_IF_ERROR(group_->Arrive(rank_, "Broadcast", [&] {
      group_->CheckSame("the Broadcast size", &Post::count);
      if (group_->mismatch().empty()) group_->CheckSameRoot();
    }));
    if (!group_->mismatch().empty()) return Error{"Broadcast: " + group_->mismatch()};
    if (rank_ != root && num_bytes > 0) std::memcpy(bytes, group_->post(root).data, num_bytes);
    return group_->Arrive(rank_, "Broadcast");  // the root's buffer is read until here
  }

  Status AllGather(const void* mine, int64_t bytes_per_rank, void* all) override {
    if (bytes_per_rank < 0) {
      return Error{"AllGather: negative size " + std::to_string(bytes_per_rank)};
    }
    group_->post(rank_) = {mine, bytes_per_rank, 0};
    VLLM_RETURN_IF_ERROR(group_->Arrive(
        rank_, "AllGather", [&] { group_->CheckSame("the AllGather size", &Post::count); }));
    if (!group_->mismatch().empty()) return Error{"AllGather: " + group_->mismatch()};
    for (int r = 0; r < size() && bytes_per_rank > 0; ++r) {
      std::memcpy(static_cast<uint8_t*>(all) + r * bytes_per_rank, group_->post(r).data,
                  bytes_per_rank);
    }
    return group_->Arrive(rank_, "AllGather");  // every rank's `mine` is read until here
  }

  Status Send(const void* bytes, int64_t num_bytes, int dest_rank) override {
    if (dest_rank < 0 || dest_rank >= size() || dest_rank == rank_) {
      return Error{"Send: rank " + std::to_string(rank_) + " cannot send to rank " +
                   std::to_string(dest_rank)};
    }
    if (num_bytes < 0) return Error{"Send: negative size " + std::to_string(num_bytes)};
    group_->Send(rank_, dest_rank, bytes, num_bytes);
    return Status::Ok();
  }

  Status Receive(void* bytes, int64_t num_bytes, int source_rank) override {
    if (source_rank < 0 || source_rank >= size() || source_rank == rank_) {
      return Error{"Receive: rank " + std::to_string(rank_) + " cannot receive from rank " +
                   std::to_string(source_rank)};
    }
    return group_->Receive(rank_, source_rank, bytes, num_bytes);
  }

  Status Barrier() override { return group_->Arrive(rank_, "Barrier"); }

 private:
  std::shared_ptr<Group> group_;
  int rank_;
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> CreateThreadCommunicators(
    int size, ThreadCommunicatorOptions options) {
  std::vector<std::unique_ptr<Communicator>> communicators;
  if (size < 1) return communicators;
  auto group = std::make_shared<Group>(size, options);
  for (int r = 0; r < group->size(); ++r) {
    communicators.push_back(std::make_unique<ThreadCommunicator>(group, r));
  }
  return communicators;
}

}  // namespace vllm::dist
