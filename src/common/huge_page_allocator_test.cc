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

TEST(HugePageAllocatorTest, ALargeBlockIsAlignedTo2MiBAndAdvisedForHugePages) {
  std::vector<uint8_t, HugePageAllocator<uint8_t>> bytes(5 * kHugePageBytes / 2, 7);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(bytes.data()) % kHugePageBytes, 0u);
  for (size_t i = 0; i < bytes.size(); i += 4096) ASSERT_EQ(bytes[i], 7);
  std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(setting, modes);
  if (modes.empty() || modes.find("[never]") != std::string::npos) {
    GTEST_SKIP() << "transparent huge pages are off here";
  }
  EXPECT_EQ(ThpEligibility(bytes.data()), 1);
}

TEST(HugePageAllocatorTest, ASmallBlockComesFromTheHeapAlignedToACacheLine) {
  std::vector<float, HugePageAllocator<float>> values(1000, 1.5f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(values.data()) % 64, 0u);
  EXPECT_EQ(values.back(), 1.5f);
  values.resize(kHugePageBytes);  // grows into a mapping of its own, keeping the values
  EXPECT_EQ(values[999], 1.5f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(values.data()) % kHugePageBytes, 0u);
}

}  // namespace
}  // namespace vllm
