#include "common/huge_page_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace vllm {
namespace {

// The "THPeligible" value of the /proc/self/smaps entry holding `address` (-1 when none is found).
int ThpEligibility(const void* address) {
  const auto target = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-' && line.find(':') > 8) {
      inside = begin <= target && target < end;
    } else if (inside && line.rfind("THPeligible:", 0) == 0) {
      return std::stoi(line.substr(line.find(':') + 1));
    }
  }
  return -1;
}

bool TransparentHugePagesAreOn() {
  std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(setting, modes);
  return !modes.empty() && modes.find("[never]") == std::string::npos;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kBlocksAreMapped = false;  // they come from operator new
#else
constexpr bool kBlocksAreMapped = true;
#endif

TEST(HugePageAllocatorTest, BlocksOfEverySizeHoldTheirValuesAlignedToACacheLine) {
  std::vector<float, HugePageAllocator<float>> values(1000, 1.5f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(values.data()) % 64, 0u);
  values.resize(kOwnMappingBytes / sizeof(float), 2.5f);  // moves to a block of its own
  EXPECT_EQ(reinterpret_cast<uintptr_t>(values.data()) % 64, 0u);
  EXPECT_EQ(values[999], 1.5f);
  EXPECT_EQ(values[1000], 2.5f);
  EXPECT_EQ(values.back(), 2.5f);
}

TEST(HugePageAllocatorTest, ALargeBlockIsAlignedTo2MiBAndAdvisedForHugePages) {
  if (!kBlocksAreMapped) GTEST_SKIP() << "AddressSanitizer: blocks come from operator new";
  std::vector<uint8_t, HugePageAllocator<uint8_t>> bytes(kOwnMappingBytes + kHugePageBytes / 2, 7);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(bytes.data()) % kHugePageBytes, 0u);
  for (size_t i = 0; i < bytes.size(); i += 4096) ASSERT_EQ(bytes[i], 7);
  if (!TransparentHugePagesAreOn()) GTEST_SKIP() << "transparent huge pages are off here";
  EXPECT_EQ(ThpEligibility(bytes.data()), 1);
}

TEST(HugePageAllocatorTest, SmallBlocksLieSideBySideInAnAdvisedChunk) {
  if (!kBlocksAreMapped) GTEST_SKIP() << "AddressSanitizer: blocks come from operator new";
  std::vector<float, HugePageAllocator<float>> first(1000, 1.5f);   // 4000 bytes
  std::vector<float, HugePageAllocator<float>> second(1000, 2.5f);  // from the next 64 bytes on
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first.data()) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(second.data()),
            reinterpret_cast<const uint8_t*>(first.data()) + 4032);
  EXPECT_EQ(first.back(), 1.5f);
  EXPECT_EQ(second.front(), 2.5f);
  if (!TransparentHugePagesAreOn()) GTEST_SKIP() << "transparent huge pages are off here";
  EXPECT_EQ(ThpEligibility(first.data()), 1);
}

TEST(HugePageAllocatorTest, AChunkIsUnmappedOnceItsBlocksAreFreed) {
  if (!kBlocksAreMapped) GTEST_SKIP() << "AddressSanitizer: blocks come from operator new";
  HugePageAllocator<uint8_t> allocator;
  constexpr size_t kBlock = kOwnMappingBytes - 64;  // 4 fit in a chunk, the 5th starts a new one
  std::vector<uint8_t*> blocks;
  for (int i = 0; i < 5; ++i) blocks.push_back(allocator.allocate(kBlock));
  blocks[0][0] = 1;
  EXPECT_EQ(blocks[3], blocks[0] + 3 * kBlock);
  EXPECT_NE(blocks[4], blocks[3] + kBlock);
  EXPECT_NE(ThpEligibility(blocks[0]), -1);  // mapped
  for (int i = 0; i < 4; ++i) allocator.deallocate(blocks[i], kBlock);
  EXPECT_EQ(ThpEligibility(blocks[0]), -1);  // the first chunk is gone
  // The newest chunk is carved again from its start once its last block is freed.
  allocator.deallocate(blocks[4], kBlock);
  uint8_t* again = allocator.allocate(kBlock);
  EXPECT_EQ(again, blocks[4]);
  allocator.deallocate(again, kBlock);
}

}  // namespace
}  // namespace vllm
