// What all connections of one server may hold together: open connections, and request bodies
// buffered in memory. Each is a SharedBudget that connections claim parts of.
#pragma once

#include <atomic>
#include <cstddef>

namespace vllm::server {

// A capacity shared by many holders; safe from any thread.
class SharedBudget {
 public:
  explicit SharedBudget(size_t capacity) : capacity_(capacity) {}
  SharedBudget(const SharedBudget&) = delete;
  SharedBudget& operator=(const SharedBudget&) = delete;

  size_t capacity() const { return capacity_; }
  size_t used() const { return used_.load(std::memory_order_relaxed); }

  // One holder's part of a budget, given back when reset or destroyed.
  class Claim {
   public:
    explicit Claim(SharedBudget& budget) : budget_(budget) {}
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;
    ~Claim() { Reset(); }

    // Raises this claim to `amount` in all; false (the claim unchanged) when the budget has no
    // room for it. Never lowers a claim.
    bool GrowTo(size_t amount);
    // Gives the whole claim back.
    void Reset();
    size_t amount() const { return amount_; }

   private:
    SharedBudget& budget_;
    size_t amount_ = 0;
  };

 private:
  bool TryTake(size_t amount);
  void Give(size_t amount) { used_.fetch_sub(amount, std::memory_order_relaxed); }

  const size_t capacity_;
  std::atomic<size_t> used_{0};
};

struct ConnectionLimits {
  SharedBudget connections;          // each open connection claims 1
  SharedBudget buffered_body_bytes;  // each request claims its body's bytes while it is read
                                     // and until its exchange ends
};

// Raises the process's soft limit on open files to its hard limit, as most servers do, and
// returns the soft limit then in force.
size_t RaiseOpenFileLimit();

// The default --max-connections under `open_file_limit`: what the limit leaves after a reserve
// for the process's own files (model, logs, engine), at most 4096.
size_t DefaultMaxConnections(size_t open_file_limit);

}  // namespace vllm::server
