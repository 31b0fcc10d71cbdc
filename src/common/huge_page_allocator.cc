#include "common/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdint>

namespace vllm {
namespace {

size_t RoundUp(size_t bytes, size_t multiple) {
  return (bytes + multiple - 1) / multiple * multiple;
}

}  // namespace

void* AllocateHugePageBacked(size_t bytes) {
  if (bytes < kHugePageBytes) return ::operator new (bytes, std::align_val_t{64});
  // Maps 2 MiB more than needed, then unmaps the ends around the first 2 MiB boundary.
  const size_t mapped_bytes = RoundUp(bytes, kHugePageBytes);
  const size_t reserved_bytes = mapped_bytes + kHugePageBytes;
  void* reserved =
      ::mmap(nullptr, reserved_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (reserved == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<uintptr_t>(reserved);
  const uintptr_t aligned = RoundUp(start, kHugePageBytes);
  if (aligned > start) ::munmap(reserved, aligned - start);
  const uintptr_t end = start + reserved_bytes;
  if (end > aligned + mapped_bytes) {
    ::munmap(reinterpret_cast<void*>(aligned + mapped_bytes), end - (aligned + mapped_bytes));
  }
#ifdef MADV_HUGEPAGE
  ::madvise(reinterpret_cast<void*>(aligned), mapped_bytes, MADV_HUGEPAGE);
#endif
  return reinterpret_cast<void*>(aligned);
}

void FreeHugePageBacked(void* pointer, size_t bytes) {
  if (pointer == nullptr) return;
  if (bytes < kHugePageBytes) {
    ::operator delete (pointer, std::align_val_t{64});
    return;
  }
  ::munmap(pointer, RoundUp(bytes, kHugePageBytes));
}

}  // namespace vllm
