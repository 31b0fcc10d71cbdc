#include "common/allocator_tuning.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdint>
#include <vector>

namespace vllm {
namespace {

int64_t MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// A buffer the size of a layer's activations, allocated, filled and freed, as each layer does.
void UseActivationBuffer() {
  constexpr size_t kBytes = size_t{48} << 20;
  std::vector<char> buffer(kBytes, 1);
  volatile char last = buffer.back();
  (void)last;
}

// Once set, a freed large buffer comes back from the heap: filling it again faults almost no pages
// (12,288 pages of 4 KiB would fault if it were mapped afresh, as glibc's defaults do while the
// dynamic mmap threshold is below the buffer's size).
TEST(AllocatorTuningTest, AFreedLargeBufferIsReusedWithoutPageFaults) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator replaces malloc";
#endif
  KeepFreedBuffersForReuse();
  UseActivationBuffer();
  const int64_t before = MinorFaults();
  UseActivationBuffer();
  UseActivationBuffer();
  EXPECT_LT(MinorFaults() - before, 500);
}

}  // namespace
}  // namespace vllm
