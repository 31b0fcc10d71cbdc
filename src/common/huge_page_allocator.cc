#include "common/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>

namespace vllm {
namespace {

size_t RoundUp(size_t bytes, size_t multiple) {
  return (bytes + multiple - 1) / multiple * multiple;
}

// `bytes` (a multiple of 2 MiB) mapped at a 2 MiB boundary and advised for huge pages: maps 2 MiB
// more than needed, then unmaps the ends around the first boundary.
uintptr_t MapAligned(size_t bytes) {
  const size_t reserved_bytes = bytes + kHugePageBytes;
  void* reserved =
      ::mmap(nullptr, reserved_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (reserved == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<uintptr_t>(reserved);
  const uintptr_t aligned = RoundUp(start, kHugePageBytes);
  if (aligned > start) ::munmap(reserved, aligned - start);
  const uintptr_t end = start + reserved_bytes;
  if (end > aligned + bytes)
    ::munmap(reinterpret_cast<void*>(aligned + bytes), end - aligned - bytes);
#ifdef MADV_HUGEPAGE
  ::madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);
#endif
  return aligned;
}

// The chunks small blocks are carved from, by start address: each chunk's bytes carved so far
// and blocks still live. New blocks go to the newest chunk, at its end.
class Chunks {
 public:
  void* Carve(size_t bytes) {
    bytes = RoundUp(bytes, 64);
    std::lock_guard<std::mutex> lock(mutex_);
    if (newest_ == chunks_.end() || newest_->second.carved + bytes > kChunkBytes) {
      if (newest_ != chunks_.end() && newest_->second.live == 0) Unmap(newest_);
      newest_ = chunks_.emplace(MapAligned(kChunkBytes), Chunk{}).first;
    }
    Chunk& chunk = newest_->second;
    void* block = reinterpret_cast<void*>(newest_->first + chunk.carved);
    chunk.carved += bytes;
    ++chunk.live;
    return block;
  }

  void Release(void* block) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto chunk = std::prev(chunks_.upper_bound(reinterpret_cast<uintptr_t>(block)));
    if (--chunk->second.live > 0) return;
    if (chunk == newest_) {
      chunk->second.carved = 0;  // carved afresh from the start
    } else {
      Unmap(chunk);
    }
  }

 private:
  struct Chunk {
    size_t carved = 0;
    int64_t live = 0;
  };
  using Iterator = std::map<uintptr_t, Chunk>::iterator;
  void Unmap(Iterator chunk) {
    ::munmap(reinterpret_cast<void*>(chunk->first), kChunkBytes);
    if (chunk == newest_) newest_ = chunks_.end();
    chunks_.erase(chunk);
  }

  std::mutex mutex_;
  std::map<uintptr_t, Chunk> chunks_;
  Iterator newest_ = chunks_.end();
};

Chunks& SharedChunks() {
  static Chunks* chunks = new Chunks();  // never destroyed: blocks may be freed at exit
  return *chunks;
}

// Under AddressSanitizer every block comes from operator new, where its bounds checks reach.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMapBlocks = false;
#else
constexpr bool kMapBlocks = true;
#endif

}  // namespace

void* AllocateHugePageBacked(size_t bytes) {
  if (!kMapBlocks) return ::operator new (bytes, std::align_val_t{64});
  if (bytes >= kOwnMappingBytes) {
    return reinterpret_cast<void*>(MapAligned(RoundUp(bytes, kHugePageBytes)));
  }
  return SharedChunks().Carve(bytes);
}

void FreeHugePageBacked(void* pointer, size_t bytes) {
  if (pointer == nullptr) return;
  if (!kMapBlocks) {
    ::operator delete (pointer, std::align_val_t{64});
  } else if (bytes >= kOwnMappingBytes) {
    ::munmap(pointer, RoundUp(bytes, kHugePageBytes));
  } else {
    SharedChunks().Release(pointer);
  }
}

}  // namespace vllm
