#include "cli/cpu_resources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace vllm {
namespace {

using ::testing::HasSubstr;

// The KV cache's memory settings moved to the engine: engine/kv_cache_memory_test.cc.
struct CpuResourcesTest : ::testing::Test {
  void SetUp() override { ::unsetenv("VLLM_CPU_OMP_THREADS_BIND"); }
  void TearDown() override { SetUp(); }
  EngineArgs args;
};

TEST_F(CpuResourcesTest, ThreadsBindGivesOneThreadPerListedCpuUnlessThreadsAreGiven) {
  EXPECT_EQ(*CountCpusInList("0-3,8"), 5);
  EXPECT_EQ(*CountCpusInList("2"), 1);
  EXPECT_THAT(CountCpusInList("0-3|4-7").error(), HasSubstr("issue 46"));
  EXPECT_FALSE(CountCpusInList("3-1").ok());
  EXPECT_FALSE(CountCpusInList("a").ok());
  ::setenv("VLLM_CPU_OMP_THREADS_BIND", "0-1", 1);
  ASSERT_TRUE(ApplyThreadsBind(/*threads_given=*/false, &args).ok());
  EXPECT_EQ(args.num_threads, 2);
  EngineArgs threads;
  threads.num_threads = 1;
  ASSERT_TRUE(ApplyThreadsBind(/*threads_given=*/true, &threads).ok());
  EXPECT_EQ(threads.num_threads, 1);
  ::setenv("VLLM_CPU_OMP_THREADS_BIND", "auto", 1);
  EngineArgs automatic;
  ASSERT_TRUE(ApplyThreadsBind(/*threads_given=*/false, &automatic).ok());
  EXPECT_EQ(automatic.num_threads, 0);
  ::setenv("VLLM_CPU_OMP_THREADS_BIND", "0-3|4-7", 1);
  EXPECT_THAT(ApplyThreadsBind(/*threads_given=*/false, &automatic).message(),
              HasSubstr("tensor parallelism"));
}

}  // namespace
}  // namespace vllm
