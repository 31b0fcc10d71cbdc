#include "cli/cpu_resources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>

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
  EXPECT_THAT(CountCpusInList("0-3|4-7").error(),
              HasSubstr("needs tensor or pipeline parallelism (-tp, -pp)"));
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
              HasSubstr("2 CPU lists ('|' separates one per rank) for -tp 1"));
}

// One list per rank: checked before mpirun starts the ranks, applied by each rank.
TEST_F(CpuResourcesTest, TensorParallelRanksEachTakeTheirList) {
  cpu_set_t before;
  ASSERT_EQ(::sched_getaffinity(0, sizeof(before), &before), 0);
  ::setenv("VLLM_CPU_OMP_THREADS_BIND", "0|0", 1);
  EngineArgs parallel;
  parallel.tensor_parallel_size = 2;
  ASSERT_TRUE(ApplyThreadsBind(/*threads_given=*/false, &parallel).ok());
  EXPECT_EQ(parallel.num_threads, 0);  // not a rank yet
  ::setenv("VLLM_CPU_OMP_THREADS_BIND", "0|x", 1);
  EXPECT_THAT(ApplyThreadsBind(/*threads_given=*/false, &parallel).message(),
              HasSubstr("expected CPU numbers"));
  ::setenv("VLLM_CPU_OMP_THREADS_BIND", "0|0", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  Status applied = ApplyThreadsBind(/*threads_given=*/false, &parallel);
  cpu_set_t pinned;
  ::sched_getaffinity(0, sizeof(pinned), &pinned);
  ::sched_setaffinity(0, sizeof(before), &before);
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::unsetenv("OMPI_COMM_WORLD_RANK");
  ASSERT_TRUE(applied.ok()) << applied.message();
  EXPECT_EQ(parallel.num_threads, 1);
  EXPECT_EQ(CPU_COUNT(&pinned), 1);
  EXPECT_TRUE(CPU_ISSET(0, &pinned));
}

}  // namespace
}  // namespace vllm
