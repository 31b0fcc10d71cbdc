// The queue of free KV blocks, least recently freed first, as an intrusive doubly linked list so
// that taking the head, appending, and removing any block from the middle are all O(1).
// A freed block that still holds cached KV stays here until it is taken (evicted) or touched by a
// prefix hit (removed).
#pragma once

#include <cstdint>
#include <vector>

namespace vllm {

class FreeBlockQueue {
 public:
  // Starts with every block 0..num_blocks-1 free, in id order.
  explicit FreeBlockQueue(int32_t num_blocks);

  int32_t size() const { return size_; }
  bool Contains(int32_t block_id) const { return in_queue_[block_id]; }
  // The least recently freed block; the queue must not be empty.
  int32_t PopFront();
  void PushBack(int32_t block_id);
  void Remove(int32_t block_id);

 private:
  static constexpr int32_t kNone = -1;
  std::vector<int32_t> prev_;
  std::vector<int32_t> next_;
  std::vector<bool> in_queue_;
  int32_t head_ = kNone;
  int32_t tail_ = kNone;
  int32_t size_ = 0;
};

}  // namespace vllm
