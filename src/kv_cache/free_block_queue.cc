#include "kv_cache/free_block_queue.h"

namespace vllm {

FreeBlockQueue::FreeBlockQueue(int32_t num_blocks)
    : prev_(num_blocks, kNone), next_(num_blocks, kNone), in_queue_(num_blocks, false) {
  for (int32_t id = 0; id < num_blocks; ++id) PushBack(id);
}

int32_t FreeBlockQueue::PopFront() {
  int32_t id = head_;
  Remove(id);
  return id;
}

void FreeBlockQueue::PushBack(int32_t block_id) {
  prev_[block_id] = tail_;
  next_[block_id] = kNone;
  if (tail_ != kNone) next_[tail_] = block_id;
  else head_ = block_id;
  tail_ = block_id;
  in_queue_[block_id] = true;
  ++size_;
}

void FreeBlockQueue::Remove(int32_t block_id) {
  int32_t before = prev_[block_id];
  int32_t after = next_[block_id];
  if (before != kNone) next_[before] = after;
  else head_ = after;
  if (after != kNone) prev_[after] = before;
  else tail_ = before;
  prev_[block_id] = next_[block_id] = kNone;
  in_queue_[block_id] = false;
  --size_;
}

}  // namespace vllm
