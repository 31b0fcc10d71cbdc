#include "cli/cpu_resources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace vllm {
namespace {

using ::testing::HasSubstr;

struct CpuResourcesTest : ::testing::Test {
  void SetUp() override {
    ::unsetenv("VLLM_CPU_KVCACHE_SPACE");
    ::unsetenv("VLLM_CPU_OMP_THREADS_BIND");
  }
  void TearDown() override { SetUp(); }
  EngineArgs args;
};

constexpr int64_t kGiB = int64_t{1} << 30;

TEST_F(CpuResourcesTest, GpuMemoryUtilizationIsAShareOfTheAvailableMemory) {
  ASSERT_TRUE(
      ApplyCpuResources({.gpu_memory_utilization = 0.5, .available_memory_bytes = 8 * kGiB}, &args)
          .ok());
  EXPECT_EQ(args.kv_cache_memory_bytes, 4 * kGiB);
  EngineArgs given;
  given.kv_cache_memory_bytes = 123;
  ASSERT_TRUE(ApplyCpuResources({.gpu_memory_utilization = 0.5,
                                 .kv_cache_memory_bytes_given = true,
                                 .available_memory_bytes = 8 * kGiB},
                                &given)
                  .ok());
  EXPECT_EQ(given.kv_cache_memory_bytes, 123);
  EXPECT_THAT(ApplyCpuResources({.gpu_memory_utilization = 1.5}, &args).message(),
              HasSubstr("--gpu-memory-utilization must be greater than 0 and at most 1"));
}

TEST_F(CpuResourcesTest, KvCacheSpaceIsGibAndWinsOverTheShare) {
  ::setenv("VLLM_CPU_KVCACHE_SPACE", "3", 1);
  ASSERT_TRUE(
      ApplyCpuResources({.gpu_memory_utilization = 0.5, .available_memory_bytes = 8 * kGiB}, &args)
          .ok());
  EXPECT_EQ(args.kv_cache_memory_bytes, 3 * kGiB);
  ::setenv("VLLM_CPU_KVCACHE_SPACE", "lots", 1);
  EXPECT_THAT(ApplyCpuResources({}, &args).message(), HasSubstr("VLLM_CPU_KVCACHE_SPACE"));
}

TEST_F(CpuResourcesTest, ThreadsBindGivesOneThreadPerListedCpuUnlessThreadsAreGiven) {
  EXPECT_EQ(*CountCpusInList("0-3,8"), 5);
  EXPECT_EQ(*CountCpusInList("2"), 1);
  EXPECT_THAT(CountCpusInList("0-3|4-7").error(), HasSubstr("issue 46"));
  EXPECT_FALSE(CountCpusInList("3-1").ok());
  EXPECT_FALSE(CountCpusInList("a").ok());
  ::setenv("VLLM_CPU_OMP_THREADS_BIND", "0-1", 1);
  ASSERT_TRUE(ApplyCpuResources({}, &args).ok());
  EXPECT_EQ(args.num_threads, 2);
  EngineArgs threads;
  threads.num_threads = 1;
  ASSERT_TRUE(ApplyCpuResources({.threads_given = true}, &threads).ok());
  EXPECT_EQ(threads.num_threads, 1);
  ::setenv("VLLM_CPU_OMP_THREADS_BIND", "auto", 1);
  EngineArgs automatic;
  ASSERT_TRUE(ApplyCpuResources({}, &automatic).ok());
  EXPECT_EQ(automatic.num_threads, 0);
}

}  // namespace
}  // namespace vllm
