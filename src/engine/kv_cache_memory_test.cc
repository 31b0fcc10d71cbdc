// The KV cache's budget: its precedence (kv_cache_memory_bytes, VLLM_CPU_KVCACHE_SPACE,
// gpu_memory_utilization, the default), the refusals, and LLMEngine::Create sizing its cache by it.
#include "engine/kv_cache_memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "common/available_memory.h"
#include "common/thread_pool.h"
#include "engine/llm_engine.h"
#include "engine/test_engine_args.h"

namespace vllm {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int64_t kMiB = int64_t{1} << 20;

struct KvCacheMemoryTest : ::testing::Test {
  void SetUp() override { ::unsetenv("VLLM_CPU_KVCACHE_SPACE"); }
  void TearDown() override { SetUp(); }

  // The budget for `args` with 8 GiB available and 2 GiB of weights.
  static Expected<int64_t> Budget(const EngineArgs& args) {
    auto memory = KvCacheMemory::Plan(args, 8 * kGiB);
    if (!memory) return Error{memory.error()};
    return memory->BytesBeside(2 * kGiB);
  }
};

TEST_F(KvCacheMemoryTest, ExplicitBytesWinOverTheEnvironmentAndTheShare) {
  ::setenv("VLLM_CPU_KVCACHE_SPACE", "3", 1);
  EngineArgs args;
  args.kv_cache_memory_bytes = 123;
  args.gpu_memory_utilization = 0.5;
  EXPECT_EQ(*Budget(args), 123);
}

TEST_F(KvCacheMemoryTest, KvCacheSpaceIsGibAndWinsOverTheShare) {
  EngineArgs args;
  args.gpu_memory_utilization = 0.5;
  ::setenv("VLLM_CPU_KVCACHE_SPACE", "3", 1);
  EXPECT_EQ(*Budget(args), 3 * kGiB);
  ::setenv("VLLM_CPU_KVCACHE_SPACE", "0.25", 1);
  EXPECT_EQ(*Budget(args), kGiB / 4);
  // 0 and empty are vLLM's "not set": the share decides.
  ::setenv("VLLM_CPU_KVCACHE_SPACE", "0", 1);
  EXPECT_EQ(*Budget(args), 3 * kGiB);
  ::setenv("VLLM_CPU_KVCACHE_SPACE", "", 1);
  EXPECT_EQ(*Budget(args), 3 * kGiB);
}

TEST_F(KvCacheMemoryTest, ShareIsOfTheAvailableMemoryLessTheWeights) {
  EngineArgs args;
  args.gpu_memory_utilization = 0.25;
  EXPECT_EQ(*Budget(args), (8 * kGiB - 2 * kGiB) / 4);
  auto memory = KvCacheMemory::Plan(args, 8 * kGiB);
  ASSERT_TRUE(memory.ok());
  EXPECT_THAT(memory->BytesBeside(9 * kGiB).error(),
              HasSubstr("gpu_memory_utilization (--gpu-memory-utilization): no memory is left for "
                        "the KV cache beside the model's weights (9216 MiB of them, 8192 MiB "
                        "available)"));
  EXPECT_THAT(KvCacheMemory::Plan(args, std::nullopt).error(),
              HasSubstr("the available memory cannot be read; give kv_cache_memory_bytes"));
}

TEST_F(KvCacheMemoryTest, NothingGivenIsTheDefaultWhateverTheWeights) {
  EngineArgs args;
  EXPECT_EQ(*Budget(args), kDefaultKvCacheMemoryBytes);
  auto memory = KvCacheMemory::Plan(args, std::nullopt);
  ASSERT_TRUE(memory.ok());
  EXPECT_EQ(*memory->BytesBeside(100 * kGiB), kDefaultKvCacheMemoryBytes);
}

TEST_F(KvCacheMemoryTest, RefusesAShareOutsideZeroToOneWithVllmsWords) {
  EngineArgs args;
  for (double share : {1.5, 1.0000001}) {
    args.gpu_memory_utilization = share;
    EXPECT_THAT(Budget(args).error(),
                HasSubstr("gpu_memory_utilization (--gpu-memory-utilization): Input should be less "
                          "than or equal to 1, got "))
        << share;
  }
  for (double share : {0.0, -0.5, std::nan("")}) {
    args.gpu_memory_utilization = share;
    EXPECT_THAT(Budget(args).error(), HasSubstr("Input should be greater than 0")) << share;
  }
  args.gpu_memory_utilization = 1.0;
  EXPECT_EQ(*Budget(args), 6 * kGiB);
  // Refused even when a fixed size makes the share unused, as vLLM checks it on its own.
  args.gpu_memory_utilization = 2.0;
  args.kv_cache_memory_bytes = kGiB;
  EXPECT_FALSE(Budget(args).ok());
}

TEST_F(KvCacheMemoryTest, RefusesAKvCacheSpaceThatIsNotGib) {
  EngineArgs args;
  args.kv_cache_memory_bytes = kGiB;  // checked even when it would not be used
  for (const char* value : {"lots", "-1", "3GiB", " 3", "1e30", "nan", "inf"}) {
    ::setenv("VLLM_CPU_KVCACHE_SPACE", value, 1);
    EXPECT_EQ(Budget(args).error(),
              "VLLM_CPU_KVCACHE_SPACE must be a number of GiB, got '" + std::string(value) + "'");
  }
}

// LLMEngine::Create, as every entry point (CLI, server, Python) reaches it.
struct KvCacheMemoryEngineTest : KvCacheMemoryTest {
  // The demo model's arguments with no KV cache size of their own.
  static EngineArgs Unsized() {
    EngineArgs args = StoriesArgs();
    args.kv_cache_memory_bytes.reset();
    return args;
  }
};

TEST_F(KvCacheMemoryEngineTest, BlockCountFollowsVllmCpuKvcacheSpace) {
  ::setenv("VLLM_CPU_KVCACHE_SPACE", "0.01", 1);
  auto engine = LLMEngine::Create(Unsized());
  ASSERT_TRUE(engine.ok()) << engine.error();
  const EngineStats stats = (*engine)->stats();
  ASSERT_GT(stats.kv_bytes_per_block, 0);
  const auto space_bytes = static_cast<int64_t>(0.01 * kGiB);
  EXPECT_EQ(stats.num_free_blocks, space_bytes / stats.kv_bytes_per_block);

  EngineArgs explicit_bytes = Unsized();
  explicit_bytes.kv_cache_memory_bytes = 4 * kMiB;
  auto explicit_engine = LLMEngine::Create(explicit_bytes);
  ASSERT_TRUE(explicit_engine.ok()) << explicit_engine.error();
  EXPECT_EQ((*explicit_engine)->stats().num_free_blocks, 4 * kMiB / stats.kv_bytes_per_block);
}

TEST_F(KvCacheMemoryEngineTest, BlockCountFollowsTheShareOfAvailableMemory) {
  // A share that buys about 16 MiB: the memory other processes take meanwhile moves it a little.
  const std::optional<int64_t> available = AvailableMemoryBytes();
  ASSERT_TRUE(available.has_value());
  EngineArgs args = Unsized();
  args.gpu_memory_utilization = static_cast<double>(16 * kMiB) / static_cast<double>(*available);
  auto engine = LLMEngine::Create(args);
  ASSERT_TRUE(engine.ok()) << engine.error();
  const EngineStats stats = (*engine)->stats();
  const int64_t about = 16 * kMiB / stats.kv_bytes_per_block;
  EXPECT_GT(stats.num_free_blocks, about / 2);
  EXPECT_LT(stats.num_free_blocks, about * 2);
}

TEST_F(KvCacheMemoryEngineTest, CreateRefusesBadValuesBeforeLoading) {
  EngineArgs args = Unsized();
  args.model = "/nonexistent/model.gguf";  // never opened: the budget is checked first
  args.gpu_memory_utilization = 1.5;
  EXPECT_THAT(LLMEngine::Create(args).error(),
              HasSubstr("Input should be less than or equal to 1, got 1.5"));
  args.gpu_memory_utilization.reset();
  ::setenv("VLLM_CPU_KVCACHE_SPACE", "lots", 1);
  EXPECT_THAT(LLMEngine::Create(args).error(),
              HasSubstr("VLLM_CPU_KVCACHE_SPACE must be a number of GiB, got 'lots'"));
}

TEST_F(KvCacheMemoryEngineTest, StoredWeightBytesAreTheFilesTensorsWithoutItsMetadata) {
  const std::string path = StoriesArgs().model;
  ThreadPool pool({.num_threads = 1});
  auto model = LoadModelFromPath(path, {.pool = &pool});
  ASSERT_TRUE(model.ok()) << model.error();
  const auto file_bytes = static_cast<int64_t>(std::filesystem::file_size(path));
  // The file also holds the vocabulary and other metadata, a small part of it.
  EXPECT_LT(StoredWeightBytes(*model), file_bytes);
  EXPECT_GT(StoredWeightBytes(*model), file_bytes * 8 / 10);
}

}  // namespace
}  // namespace vllm
