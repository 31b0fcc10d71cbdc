#include "common/allocator_tuning.h"

#include <mutex>  // also defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace vllm {

void KeepFreedBuffersForReuse() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    constexpr int kOwnMappingBytes = 256 << 20;  // blocks at least this large are mmap'd
    constexpr int kTrimBytes = 1 << 30;          // free memory kept at the heap's top
    mallopt(M_MMAP_THRESHOLD, kOwnMappingBytes);
    mallopt(M_TRIM_THRESHOLD, kTrimBytes);
  });
#endif
}

void ReturnFreeHeapPages() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace vllm
