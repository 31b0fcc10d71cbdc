// Tensor-parallel shards of decoders (tensor_parallel.h) over thread ranks (ThreadCommunicator):
// each rank loads its shard of a random model with its own thread pool and paged KV storage of
// its local config, and runs the same steps (a prefill of several prompts in one batch, then
// batched decode steps of each row's greedy token). Every rank ends with the same logits, bit for
// bit; they match the whole model's within kLogitTolerance (only the order of the row-parallel
// sums differs: the shards hold the file's own bytes) and the greedy tokens are the same.
#include "model/tensor_parallel.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "dist/thread_communicator.h"
#include "model/hf_export.h"
#include "model/model_loader.h"
#include "model/parallel_steps_for_test.h"
#include "model/random_model.h"

namespace vllm::parallel_test {
namespace {

// LogitsMatchWhole's tolerance (kLogitTolerance of the largest |whole logit|), measured: at most
// 3e-7 of the largest |logit| (f32, q4_K; llama, qwen, gemma, phi3 and MoE shapes), 0 for q8_0.

// Each rank's run of the same steps on its shard.
std::vector<StepsResult> RunSharded(const std::string& path, int num_ranks,
                                    const std::vector<Prompt>& prompts, int num_decode_steps) {
  std::vector<StepsResult> runs(num_ranks);
  OnRanks(num_ranks, [&](dist::Communicator& comm) {
    ThreadPool pool(OneThread());
    auto loaded = LoadModelFromPath(path, {.pool = &pool, .tensor_parallel = &comm});
    if (!loaded) {
      // The others wait in their first collective for this rank; the sizes tested load on all.
      runs[comm.rank()].error = loaded.error();
      return;
    }
    runs[comm.rank()] = RunSteps(*loaded->model, prompts, num_decode_steps);
  });
  return runs;
}

struct Case {
  std::string shape, dtype;
  int num_ranks;
};

// For ctest's listing of the cases (GetParam() = llama-tiny f32 tp=2).
void PrintTo(const Case& c, std::ostream* out) {
  *out << c.shape << " " << c.dtype << " tp=" << c.num_ranks;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name =
      info.param.shape + "_" + info.param.dtype + "_tp" + std::to_string(info.param.num_ranks);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

class TensorParallelTest : public ::testing::TestWithParam<Case> {};

// The model at `path` (a GGUF file or a model directory) whole and over `num_ranks` ranks.
void ExpectShardsMatchWhole(const std::string& path, int num_ranks, const std::string& label) {
  constexpr int kDecodeSteps = 4;
  const std::vector<Prompt> prompts = MakePrompts({13, 40, 7}, kVocabSize, kDecodeSteps + 1);
  const StepsResult whole = RunWhole(path, prompts, kDecodeSteps);
  ASSERT_TRUE(whole.error.empty()) << whole.error;
  const std::vector<StepsResult> ranks = RunSharded(path, num_ranks, prompts, kDecodeSteps);
  for (int r = 0; r < num_ranks; ++r) {
    ASSERT_TRUE(ranks[r].error.empty()) << "rank " << r << ": " << ranks[r].error;
    EXPECT_EQ(ranks[r].logits, ranks[0].logits) << "rank " << r << " differs from rank 0";
  }
  EXPECT_TRUE(LogitsMatchWhole(ranks[0], whole, label + " tp=" + std::to_string(num_ranks)));
  EXPECT_EQ(ranks[0].tokens, whole.tokens);
}

TEST_P(TensorParallelTest, ShardsMatchTheWholeModel) {
  const Case& c = GetParam();
  RandomModelFile file(c.shape, c.dtype);
  ASSERT_TRUE(file.status().ok()) << file.status().message();
  ExpectShardsMatchWhole(file.path(), c.num_ranks, c.shape + " " + c.dtype);
}

// A Hugging Face model directory's safetensors are sliced as a GGUF file's tensors are.
TEST(TensorParallelDirectoryTest, ShardsOfSafetensorsMatchTheWholeModel) {
  RandomModelFile file("qwen3-tiny", "f32");
  ASSERT_TRUE(file.status().ok()) << file.status().message();
  auto gguf = GgufFile::Open(file.path());
  ASSERT_TRUE(gguf.ok()) << gguf.error();
  const std::filesystem::path dir = file.path() + ".hf";
  Status written = WriteHfCheckpointFromGguf(**gguf, dir.string(),
                                             std::string(VLLM_SHARED_DIR) + "/tokenizers/qwen3");
  ASSERT_TRUE(written.ok()) << written.message();
  ExpectShardsMatchWhole(dir.string(), 2, "qwen3-tiny safetensors");
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Families, TensorParallelTest,
    ::testing::Values(
        Case{"llama-tiny", "f32", 2},   // GQA: 4 heads, 2 KV heads split
        Case{"llama-tiny", "f32", 4},   // 2 KV heads replicated over 4 ranks
        Case{"llama-tiny", "q8_0", 2},  // 32-wide blocks
        Case{"llama-tiny", "q8_0", 4},
        Case{"llama-d512", "q4_k", 2},     // 256-wide blocks: 256 attn_output columns per rank
        Case{"qwen2-tiny", "f32", 2},      // Q/K/V biases, tied embeddings
        Case{"qwen3-tiny", "f32", 2},      // per-head Q/K norms
        Case{"gemma2-tiny", "f32", 2},     // soft-caps, post norms
        Case{"gemma3-tiny", "f32", 2},     // 1 KV head replicated, Q/K norms, sliding windows
        Case{"phi3-tiny", "f32", 2},       // fused attn_qkv and gate/up in ffn_up
        Case{"mixtral-tiny", "f32", 2},    // experts split by their FFN columns
        Case{"qwen3moe-tiny", "q8_0", 2},  // 48-wide experts: 24 columns per rank
        Case{"gpt-oss-tiny", "f32", 2}),   // attention sinks, expert and output biases
    CaseName);

// Under tensor parallel 2, a prompt's logits are the same bits alone and in a batch with others.
TEST(TensorParallelBatchTest, BatchedEqualsAloneBitwise) {
  RandomModelFile file("llama-tiny", "f32");
  ASSERT_TRUE(file.status().ok()) << file.status().message();
  const std::vector<Prompt> prompts = MakePrompts({37, 5, 70}, kVocabSize, 2);
  std::vector<std::vector<StepsResult>> alone(2);
  std::vector<StepsResult> batched(2);
  OnRanks(2, [&](dist::Communicator& comm) {
    ThreadPool pool(OneThread());
    auto loaded = LoadModelFromPath(file.path(), {.pool = &pool, .tensor_parallel = &comm});
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    for (const Prompt& prompt : prompts) {
      alone[comm.rank()].push_back(RunSteps(*loaded->model, {prompt}, 1));
    }
    batched[comm.rank()] = RunSteps(*loaded->model, prompts, 1);
  });
  const int64_t vocab = kVocabSize;
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_TRUE(batched[rank].error.empty()) << batched[rank].error;
    for (size_t s = 0; s < prompts.size(); ++s) {
      const StepsResult& one = alone[rank][s];
      ASSERT_TRUE(one.error.empty()) << one.error;
      for (size_t step = 0; step < one.logits.size(); ++step) {
        const auto row = batched[rank].logits[step].begin() + s * vocab;
        EXPECT_TRUE(std::equal(one.logits[step].begin(), one.logits[step].end(), row))
            << "rank " << rank << " prompt " << s << " step " << step;
      }
    }
  }
}

// Loading makes no collective, so one rank of a group can be loaded alone for its errors.
std::string ShardLoadError(const std::string& path, int num_ranks) {
  auto communicators = dist::CreateThreadCommunicators(num_ranks);
  ThreadPool pool(OneThread());
  auto loaded = LoadModelFromPath(path, {.pool = &pool, .tensor_parallel = communicators[0].get()});
  return loaded.ok() ? "" : loaded.error();
}

TEST(TensorParallelErrorsTest, HeadsMustDivide) {
  RandomModelFile file("llama-tiny", "f32", 1);
  ASSERT_TRUE(file.status().ok()) << file.status().message();
  EXPECT_EQ(ShardLoadError(file.path(), 3),
            file.path() +
                ": Total number of attention heads (4) must be divisible by tensor parallel size "
                "(3)");
}

TEST(TensorParallelErrorsTest, ColumnSlicesMustFillWholeBlocks) {
  RandomModelFile file("llama-d256", "q4_k", 1);
  ASSERT_TRUE(file.status().ok()) << file.status().message();
  EXPECT_EQ(ShardLoadError(file.path(), 2),
            file.path() +
                ": tensor parallel size 2: blk.0.attn_output.weight has 128 input columns per "
                "rank, not a multiple of Q4_K's 256-wide blocks");
}

TEST(TensorParallelErrorsTest, PoolingModelsAreRefused) {
  RandomModelFile file("qwen3-embedding-tiny", "f32", 1);
  ASSERT_TRUE(file.status().ok()) << file.status().message();
  EXPECT_EQ(
      ShardLoadError(file.path(), 2),
      file.path() + ": pooling model qwen3 with tensor or pipeline parallel is not supported yet");
}

TEST(TensorParallelErrorsTest, LoraIsRefusedOnEveryRank) {
  RandomModelFile file("llama-tiny", "f32", 1);
  ASSERT_TRUE(file.status().ok()) << file.status().message();
  const lora::LoraWeights adapter;
  std::vector<std::string> errors(2);
  OnRanks(2, [&](dist::Communicator& comm) {
    ThreadPool pool(OneThread());
    auto loaded = LoadModelFromPath(file.path(), {.pool = &pool, .tensor_parallel = &comm});
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    ForwardBatch batch;
    const std::vector<int32_t> tokens = {1, 2, 3}, blocks = {1};
    ASSERT_TRUE(AppendSequence(tokens, 0, {&blocks, 1}, kBlockSize, batch).ok());
    batch.logits_indices = {2};
    batch.seq_loras = {&adapter};
    const ModelConfig& config = loaded->model->config();
    auto kv = KvStorage::Create({.num_layers = config.num_layers,
                                 .num_blocks = 4,
                                 .block_size = kBlockSize,
                                 .num_kv_heads = config.num_kv_heads,
                                 .head_dim = config.head_dim});
    ASSERT_TRUE(kv.ok()) << kv.error();
    std::vector<float> logits(config.vocab_size);
    Status status = loaded->model->Forward(batch, **kv, logits.data());
    errors[comm.rank()] = status.ok() ? "" : status.message();
  });
  for (const std::string& error : errors) {
    EXPECT_EQ(error, "LoRA adapters with tensor or pipeline parallel are not supported yet");
  }
}

TEST(TensorParallelConfigTest, LocalShapes) {
  ModelConfig whole;
  whole.vocab_size = 10;
  whole.num_heads = 8;
  whole.num_kv_heads = 2;
  whole.intermediate_size = 64;
  auto local = TensorParallelConfig(whole, 3, 4);
  ASSERT_TRUE(local.ok()) << local.error();
  EXPECT_EQ(local->num_heads, 2);
  EXPECT_EQ(local->num_kv_heads, 1);  // replicated
  EXPECT_EQ(local->intermediate_size, 16);
  EXPECT_EQ(local->vocab_size, 10);
  // ceil(10 / 4) = 3 rows per rank; the last holds 1.
  const VocabShard last = VocabShardOf(10, 3, 4);
  EXPECT_EQ(last.begin, 9);
  EXPECT_EQ(last.num_rows, 1);
  EXPECT_EQ(last.padded_rows, 3);
  whole.num_kv_heads = 3;
  EXPECT_FALSE(TensorParallelConfig(whole, 0, 2).ok());  // 3 KV heads over 2 ranks
  whole.num_kv_heads = 2;
  whole.intermediate_size = 30;
  auto error = TensorParallelConfig(whole, 0, 4);
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.error(), "Intermediate size (30) must be divisible by tensor parallel size (4)");
  whole.intermediate_size = 64;
  whole.vocab_size = 3;  // ceil(3 / 4) = 1: rank 3 would hold no row
  EXPECT_FALSE(TensorParallelConfig(whole, 0, 4).ok());
}

// VmRSS of this process in bytes.
int64_t ResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  return -1;
}

constexpr char kMemoryTest[] = "TensorParallelMemoryTest.RankResidentMemoryIsAboutItsShare";
constexpr char kLoadToMeasure[] = "VLLM_TENSOR_PARALLEL_TEST_LOAD";  // "<ranks> <path>"

// In the process the memory test starts: loads rank 0 of <ranks> (1: the whole model) of <path>
// and prints the growth of its resident memory.
void MeasureLoad(const std::string& what) {
  const size_t space = what.find(' ');
  const int num_ranks = std::stoi(what.substr(0, space));
  auto communicators = dist::CreateThreadCommunicators(num_ranks);
  ThreadPool pool(OneThread());
  const int64_t before = ResidentBytes();
  auto loaded = LoadModelFromPath(
      what.substr(space + 1),
      {.pool = &pool, .tensor_parallel = num_ranks > 1 ? communicators[0].get() : nullptr});
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  std::printf("resident growth %lld\n", static_cast<long long>(ResidentBytes() - before));
}

// The growth of a fresh process's resident memory from loading `path` (rank 0 of `num_ranks`;
// 1: the whole model): this test in a new process of this binary, so that no memory that this
// one freed and kept for reuse hides what the load takes.
int64_t ResidentBytesOfLoad(const std::string& path, int num_ranks) {
  const std::string command = std::string(kLoadToMeasure) + "='" + std::to_string(num_ranks) + " " +
                              path + "' /proc/" + std::to_string(::getpid()) +
                              "/exe --gtest_filter=" + kMemoryTest;
  FILE* child = ::popen(command.c_str(), "r");
  if (child == nullptr) return -1;
  char line[256];
  int64_t grown = -1;
  while (std::fgets(line, sizeof(line), child) != nullptr) {
    long long value = 0;
    if (std::sscanf(line, "resident growth %lld", &value) == 1) grown = value;
  }
  return ::pclose(child) == 0 ? grown : -1;
}

// A rank holds about 1/N of the weights: its packed slices, not the file's pages. Besides them a
// load holds the file's metadata (a 32000-token vocabulary) and the norms on every rank.
TEST(TensorParallelMemoryTest, RankResidentMemoryIsAboutItsShare) {
  if (const char* what = std::getenv(kLoadToMeasure)) return MeasureLoad(what);
  constexpr int64_t kUnsharded = 8 << 20;
  RandomModelFile file("llama-d512", "q8_0", 8);
  ASSERT_TRUE(file.status().ok()) << file.status().message();
  const int64_t whole = ResidentBytesOfLoad(file.path(), 1);
  const int64_t half = ResidentBytesOfLoad(file.path(), 2);
  const int64_t quarter = ResidentBytesOfLoad(file.path(), 4);
  ASSERT_GT(whole, 0);
  ASSERT_GT(half, 0);
  ASSERT_GT(quarter, 0);
  std::printf("resident growth of a load: whole %.1f MiB, rank of 2 %.1f MiB, rank of 4 %.1f MiB\n",
              whole / 1048576.0, half / 1048576.0, quarter / 1048576.0);
  EXPECT_LT(half, whole / 2 + kUnsharded);
  EXPECT_LT(quarter, whole / 4 + kUnsharded);
}

}  // namespace
}  // namespace vllm::parallel_test
