// Pipeline stages of decoders (pipeline_parallel.h) over thread ranks (ThreadCommunicator): each
// stage loads its layers of a random model with its own thread pool and KV storage and runs the
// same steps (a prefill of several prompts in one batch, long enough to be cut into micro-batches
// inside a prompt, then batched decode steps); the first stage's logits, which every stage takes
// for its next step as an engine's rank 0 would send it, are the whole model's bit for bit. Also
// vLLM's split of the layers and the cutting of a batch into micro-batches.
#include "model/pipeline_parallel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "model/forward_batch_split.h"
#include "model/kv_cache_layout.h"
#include "model/parallel_steps_for_test.h"

namespace vllm::parallel_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Stage `stage` of `num_stages` over `num_layers` layers as {first, end}.
std::vector<int64_t> RangeOf(int64_t num_layers, int stage, int num_stages,
                             const std::string& partition = "") {
  auto range = PipelineStageOf(num_layers, stage, num_stages, partition);
  EXPECT_TRUE(range.ok()) << range.error();
  return range ? std::vector<int64_t>{range->first_layer, range->end_layer}
               : std::vector<int64_t>{};
}

TEST(PipelineStageTest, SplitsLayersAsVllmDoes) {
  // 22 layers over 4 stages: 5 each, the 2 left over to the stages before the last.
  EXPECT_THAT(RangeOf(22, 0, 4), ElementsAre(0, 5));
  EXPECT_THAT(RangeOf(22, 1, 4), ElementsAre(5, 11));
  EXPECT_THAT(RangeOf(22, 2, 4), ElementsAre(11, 17));
  EXPECT_THAT(RangeOf(22, 3, 4), ElementsAre(17, 22));
  EXPECT_THAT(RangeOf(5, 0, 2), ElementsAre(0, 3));
  EXPECT_THAT(RangeOf(5, 1, 2), ElementsAre(3, 5));
  EXPECT_THAT(RangeOf(8, 0, 1), ElementsAre(0, 8));
  EXPECT_THAT(RangeOf(8, 1, 2, "3,5"), ElementsAre(3, 8));
  auto stage = PipelineStageOf(8, 1, 2, "");
  ASSERT_TRUE(stage.ok());
  EXPECT_FALSE(stage->is_first());
  EXPECT_TRUE(stage->is_last());
}

TEST(PipelineStageTest, RefusesStagesWithoutLayersAndPartitionsThatDoNotFit) {
  EXPECT_EQ(PipelineStageOf(2, 0, 3, "").error(),
            "pipeline_parallel_size (-pp/--pipeline-parallel-size) 3 is more than the model's 2 "
            "layers: every stage needs one");
  EXPECT_THAT(
      PipelineStageOf(8, 0, 2, "4,3").error(),
      HasSubstr("gives 2 stages 7 layers; pipeline_parallel_size is 2 and the model has 8"));
  EXPECT_THAT(PipelineStageOf(8, 0, 2, "8").error(), HasSubstr("gives 1 stages 8 layers"));
  for (const char* bad : {"4,x", "4,,4", "0,8", "-1,9", "", ","}) {
    if (std::string(bad).empty()) continue;  // empty: the even split
    EXPECT_THAT(PipelineStageOf(8, 0, 2, bad).error(),
                HasSubstr("expected positive layer counts separated by commas"))
        << bad;
  }
}

// Gemma 3's pattern over 8 layers (every 6th global): a stage keeps its layers of each group.
TEST(PipelineStageTest, AStagesKvBlocksHoldOnlyItsLayers) {
  const std::vector<int64_t> windows = {512, 512, 512, 512, 512, 0, 512, 512};
  const KvCacheLayout whole = KvCacheLayoutFromWindows(windows);
  ASSERT_EQ(whole.group_size, 1);  // 1 full layer: groups of 1
  const KvCacheLayout single = SingleGroupKvCacheLayout(8);
  const KvCacheLayout first = StageKvCacheLayout(single, 0, 5);
  const KvCacheLayout second = StageKvCacheLayout(single, 5, 8);
  EXPECT_EQ(first.group_size, 5);
  EXPECT_EQ(second.group_size, 3);
  EXPECT_THAT(second.place_in_group, ElementsAre(0, 0, 0, 0, 0, 0, 1, 2));
  EXPECT_EQ(second.groups.size(), single.groups.size());
  // The same whichever stage's layout it is made from.
  EXPECT_EQ(StageKvCacheLayout(first, 5, 8).place_in_group, second.place_in_group);
  EXPECT_EQ(StageKvCacheLayout(first, 5, 8).group_size, second.group_size);
  const KvCacheLayout sliding = StageKvCacheLayout(whole, 4, 8);
  EXPECT_EQ(sliding.num_groups(), whole.num_groups());
  EXPECT_EQ(sliding.group_size, 1);
}

TEST(PipelineStageTest, CutsOnlyStepsLargeEnoughToOverlap) {
  EXPECT_EQ(NumMicroBatches(1, 2), 1);
  EXPECT_EQ(NumMicroBatches(127, 2), 1);
  EXPECT_EQ(NumMicroBatches(128, 2), 2);
  EXPECT_EQ(NumMicroBatches(300, 2), 4);
  EXPECT_EQ(NumMicroBatches(4096, 2), 8);
  EXPECT_EQ(NumMicroBatches(4096, 3), 12);
}

// Three sequences (4, 1 and 3 new tokens, the first after 2 computed), logits of each last token
// and of the first sequence's second token, input embeddings over rows 2 … 4.
TEST(ForwardBatchSplitTest, PartsCoverTheBatchAndKeepEachRowsContext) {
  constexpr int64_t kHidden = 2;
  ForwardBatch batch;
  const std::vector<std::vector<int32_t>> tables = {{1, 2}, {3}, {4}};
  ASSERT_TRUE(
      AppendSequence(std::vector<int32_t>{10, 11, 12, 13}, 2, {&tables[0], 1}, 16, batch).ok());
  ASSERT_TRUE(AppendSequence(std::vector<int32_t>{20}, 5, {&tables[1], 1}, 16, batch).ok());
  ASSERT_TRUE(AppendSequence(std::vector<int32_t>{30, 31, 32}, 0, {&tables[2], 1}, 16, batch).ok());
  batch.logits_indices = {3, 4, 7, 1};
  const std::vector<float> embeds = {0, 1, 2, 3, 4, 5};  // rows 2, 3, 4
  batch.input_embeds.push_back({.first_row = 2, .values = embeds});

  const std::vector<MicroBatch> parts = SplitForwardBatch(batch, 3, kHidden);
  ASSERT_EQ(parts.size(), 3u);  // rows 0-2, 3-5, 6-7
  EXPECT_EQ(parts[0].first_row, 0);
  EXPECT_EQ(parts[1].first_row, 3);
  EXPECT_EQ(parts[2].first_row, 6);
  // Part 0: the first sequence's first 3 tokens, a chunk that ends at position 4.
  EXPECT_THAT(parts[0].batch.token_ids, ElementsAre(10, 11, 12));
  EXPECT_THAT(parts[0].batch.positions, ElementsAre(2, 3, 4));
  EXPECT_THAT(parts[0].batch.seq_lens, ElementsAre(5));
  EXPECT_THAT(parts[0].batch.query_start_loc, ElementsAre(0, 3));
  EXPECT_THAT(parts[0].batch.logits_indices, ElementsAre(1));
  EXPECT_THAT(parts[0].logits_rows, ElementsAre(3));
  ASSERT_EQ(parts[0].batch.input_embeds.size(), 1u);
  EXPECT_EQ(parts[0].batch.input_embeds[0].first_row, 2);
  EXPECT_THAT(parts[0].batch.input_embeds[0].values, ElementsAre(0, 1));
  // Part 1: the first sequence's last token, the second sequence, the third's first token.
  EXPECT_THAT(parts[1].batch.token_ids, ElementsAre(13, 20, 30));
  EXPECT_THAT(parts[1].batch.seq_lens, ElementsAre(6, 6, 1));
  EXPECT_THAT(parts[1].batch.query_start_loc, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(parts[1].batch.logits_indices, ElementsAre(0, 1));
  EXPECT_THAT(parts[1].logits_rows, ElementsAre(0, 1));
  ASSERT_EQ(parts[1].batch.input_embeds.size(), 1u);
  EXPECT_EQ(parts[1].batch.input_embeds[0].first_row, 0);
  EXPECT_THAT(parts[1].batch.input_embeds[0].values, ElementsAre(2, 3, 4, 5));
  EXPECT_THAT(parts[2].batch.token_ids, ElementsAre(31, 32));
  EXPECT_THAT(parts[2].batch.positions, ElementsAre(1, 2));
  EXPECT_THAT(parts[2].batch.logits_indices, ElementsAre(1));
  EXPECT_THAT(parts[2].logits_rows, ElementsAre(2));
  EXPECT_TRUE(parts[2].batch.input_embeds.empty());
  // Each part's slots and tables are its rows' and sequences', so each passes the checks.
  auto kv = KvStorage::Create(
      {.num_layers = 1, .num_blocks = 8, .block_size = 16, .num_kv_heads = 1, .head_dim = 2});
  ASSERT_TRUE(kv.ok());
  ASSERT_TRUE(ValidateForwardBatch(batch, **kv).ok());
  std::vector<int64_t> slots;
  for (const MicroBatch& part : parts) {
    Status valid = ValidateForwardBatch(part.batch, **kv);
    EXPECT_TRUE(valid.ok()) << valid.message();
    const std::vector<int64_t>& part_slots = part.batch.kv_groups[0].slot_mapping;
    slots.insert(slots.end(), part_slots.begin(), part_slots.end());
  }
  EXPECT_EQ(slots, batch.kv_groups[0].slot_mapping);
  // One part is the batch itself; more parts than tokens are one token each.
  EXPECT_EQ(SplitForwardBatch(batch, 1, kHidden)[0].batch.token_ids, batch.token_ids);
  EXPECT_EQ(SplitForwardBatch(batch, 100, kHidden).size(), 8u);
}

// Every stage runs Forward; afterwards each holds the first stage's logits (an engine's rank 0
// samples them and sends the next step to every rank).
class StageTakingFirstStagesLogits final : public Model {
 public:
  StageTakingFirstStagesLogits(Model& stage, dist::Communicator& stages)
      : stage_(stage), stages_(stages) {}
  const ModelConfig& config() const override { return stage_.config(); }
  int64_t weight_bytes() const override { return stage_.weight_bytes(); }
  KvStorage::Options KvStorageOptionsOf(const KvStorage::Options& whole) const override {
    return stage_.KvStorageOptionsOf(whole);
  }
  Status Forward(const ForwardBatch& batch, KvStorage& kv, float* logits) override {
    VLLM_RETURN_IF_ERROR(stage_.Forward(batch, kv, logits));
    const int64_t bytes =
        static_cast<int64_t>(batch.logits_indices.size()) * config().vocab_size * sizeof(float);
    return stages_.Broadcast(logits, bytes, 0);
  }

 private:
  Model& stage_;
  dist::Communicator& stages_;
};

struct StagesRun {
  std::vector<StepsResult> runs;  // per stage
  std::vector<int64_t> weight_bytes;
  std::vector<int64_t> kv_bytes_per_block;  // the stage's KV storage's
};

StagesRun RunStages(const std::string& path, int num_stages, const std::vector<Prompt>& prompts,
                    int num_decode_steps) {
  StagesRun result{.runs = std::vector<StepsResult>(num_stages),
                   .weight_bytes = std::vector<int64_t>(num_stages),
                   .kv_bytes_per_block = std::vector<int64_t>(num_stages)};
  OnRanks(num_stages, [&](dist::Communicator& comm) {
    ThreadPool pool(OneThread());
    auto loaded = LoadModelFromPath(path, {.pool = &pool, .pipeline_parallel = &comm});
    if (!loaded) {  // loading makes no collective: every stage stops here alike
      result.runs[comm.rank()].error = loaded.error();
      return;
    }
    result.weight_bytes[comm.rank()] = loaded->model->weight_bytes();
    const ModelConfig& config = loaded->model->config();
    result.kv_bytes_per_block[comm.rank()] = KvStorage::BytesPerBlock(
        loaded->model->KvStorageOptionsOf({.num_layers = config.num_layers,
                                           .block_size = kBlockSize,
                                           .num_kv_heads = config.num_kv_heads,
                                           .head_dim = config.head_dim,
                                           .layout = SingleGroupKvCacheLayout(config.num_layers)}));
    StageTakingFirstStagesLogits stage(*loaded->model, comm);
    result.runs[comm.rank()] = RunSteps(stage, prompts, num_decode_steps);
  });
  return result;
}

struct Case {
  std::string shape, dtype;
  int num_stages;
  int64_t num_layers;  // 0: the shape's
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.shape << " " << c.dtype << " pp=" << c.num_stages;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name =
      info.param.shape + "_" + info.param.dtype + "_pp" + std::to_string(info.param.num_stages);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

class PipelineParallelTest : public ::testing::TestWithParam<Case> {};

// A prefill of 13 + 140 + 7 tokens (two micro-batches, cut inside the second prompt), then
// batched decode steps: the stages' logits are the whole model's, bit for bit.
TEST_P(PipelineParallelTest, StagesMatchTheWholeModelBitwise) {
  const Case& c = GetParam();
  RandomModelFile file(c.shape, c.dtype, c.num_layers);
  ASSERT_TRUE(file.status().ok()) << file.status().message();
  constexpr int kDecodeSteps = 3;
  const std::vector<Prompt> prompts = MakePrompts({13, 140, 7}, kVocabSize, kDecodeSteps + 1);
  const StepsResult whole = RunWhole(file.path(), prompts, kDecodeSteps);
  ASSERT_TRUE(whole.error.empty()) << whole.error;
  const StagesRun stages = RunStages(file.path(), c.num_stages, prompts, kDecodeSteps);
  int64_t stage_weight_bytes = 0;
  for (int s = 0; s < c.num_stages; ++s) {
    ASSERT_TRUE(stages.runs[s].error.empty()) << "stage " << s << ": " << stages.runs[s].error;
    EXPECT_EQ(stages.runs[s].logits, whole.logits) << "stage " << s;
    stage_weight_bytes += stages.weight_bytes[s];
  }
  EXPECT_EQ(stages.runs[0].tokens, whole.tokens);
  // Each stage holds its own layers (and the last the head) and their KV blocks: together, the
  // whole model's.
  ThreadPool pool(OneThread());
  auto loaded = LoadModelFromPath(file.path(), {.pool = &pool});
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(stage_weight_bytes, loaded->model->weight_bytes());
  const ModelConfig& config = loaded->model->config();
  const int64_t whole_kv_bytes_per_block =
      KvStorage::BytesPerBlock({.num_layers = config.num_layers,
                                .block_size = kBlockSize,
                                .num_kv_heads = config.num_kv_heads,
                                .head_dim = config.head_dim,
                                .layout = SingleGroupKvCacheLayout(config.num_layers)});
  int64_t stage_kv_bytes_per_block = 0;
  for (int64_t bytes : stages.kv_bytes_per_block) stage_kv_bytes_per_block += bytes;
  EXPECT_EQ(stage_kv_bytes_per_block, whole_kv_bytes_per_block);
}

INSTANTIATE_TEST_SUITE_P(
    Families, PipelineParallelTest,
    ::testing::Values(Case{"llama-tiny", "f32", 2, 0}, Case{"llama-tiny", "q8_0", 3, 5},
                      Case{"llama-d256", "q4_k", 2, 3},     // a K-quant, 3 layers split 2 + 1
                      Case{"qwen2-tiny", "f32", 2, 0},      // tied embeddings: the head on the last
                      Case{"gemma2-tiny", "f32", 2, 0},     // soft-caps, post norms
                      Case{"gemma3-tiny", "f32", 2, 0},     // sliding-window layers
                      Case{"phi3-tiny", "f32", 2, 0},       // fused attn_qkv and gate/up
                      Case{"qwen3moe-tiny", "q8_0", 2, 0},  // experts
                      Case{"gpt-oss-tiny", "f32", 2, 0}),   // sinks, expert biases
    CaseName);

// One long prompt cut into four micro-batches, the later ones reading the K/V the earlier ones
// wrote on each stage; and a prompt's logits are the same alone and batched with others.
TEST(PipelineParallelBatchTest, LongPromptsAndBatchesMatchTheWholeModel) {
  RandomModelFile file("llama-tiny", "f32");
  ASSERT_TRUE(file.status().ok()) << file.status().message();
  const std::vector<Prompt> long_prompt = MakePrompts({300}, kVocabSize, 3);
  const StepsResult whole = RunWhole(file.path(), long_prompt, 2);
  ASSERT_TRUE(whole.error.empty()) << whole.error;
  const StagesRun stages = RunStages(file.path(), 2, long_prompt, 2);
  ASSERT_TRUE(stages.runs[0].error.empty()) << stages.runs[0].error;
  EXPECT_EQ(stages.runs[0].logits, whole.logits);

  const std::vector<Prompt> prompts = MakePrompts({37, 5, 90}, kVocabSize, 2);
  const StagesRun batched = RunStages(file.path(), 2, prompts, 1);
  ASSERT_TRUE(batched.runs[0].error.empty()) << batched.runs[0].error;
  for (size_t p = 0; p < prompts.size(); ++p) {
    const StagesRun alone = RunStages(file.path(), 2, {prompts[p]}, 1);
    ASSERT_TRUE(alone.runs[0].error.empty()) << alone.runs[0].error;
    for (size_t step = 0; step < alone.runs[0].logits.size(); ++step) {
      const std::vector<float>& row = alone.runs[0].logits[step];
      const auto batched_row = batched.runs[0].logits[step].begin() + p * kVocabSize;
      EXPECT_TRUE(std::equal(row.begin(), row.end(), batched_row)) << "prompt " << p;
    }
  }
}

// Tensor and pipeline parallel together: 2 stages of 2 tensor-parallel ranks each (4 threads,
// vLLM's order: rank r runs stage r / 2 as tensor-parallel rank r % 2). Each stage's ranks
// all-reduce among themselves and pass the residual stream to their peer of the next stage; the
// logits match the whole model's up to the order of the row-parallel sums, and the greedy tokens
// are the same.
TEST(PipelineParallelBatchTest, StagesOfTensorParallelRanksMatchTheWholeModel) {
  RandomModelFile file("llama-tiny", "q8_0", 4);
  ASSERT_TRUE(file.status().ok()) << file.status().message();
  const std::vector<Prompt> prompts = MakePrompts({13, 140, 7}, kVocabSize, 3);
  const StepsResult whole = RunWhole(file.path(), prompts, 2);
  ASSERT_TRUE(whole.error.empty()) << whole.error;
  std::vector<std::vector<std::unique_ptr<dist::Communicator>>> tensor_groups, stage_peers;
  for (int i = 0; i < 2; ++i) {
    tensor_groups.push_back(dist::CreateThreadCommunicators(2));  // the ranks of stage i
    stage_peers.push_back(dist::CreateThreadCommunicators(2));    // tensor rank i of each stage
  }
  std::vector<StepsResult> runs(4);
  std::vector<std::thread> threads;
  for (int r = 0; r < 4; ++r) {
    threads.emplace_back([&, r] {
      const int stage = r / 2, tensor_rank = r % 2;
      dist::Communicator& tensor = *tensor_groups[stage][tensor_rank];
      dist::Communicator& stages = *stage_peers[tensor_rank][stage];
      ThreadPool pool(OneThread());
      auto loaded = LoadModelFromPath(
          file.path(), {.pool = &pool, .tensor_parallel = &tensor, .pipeline_parallel = &stages});
      if (!loaded) {
        runs[r].error = loaded.error();
        return;
      }
      StageTakingFirstStagesLogits model(*loaded->model, stages);
      runs[r] = RunSteps(model, prompts, 2);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int r = 0; r < 4; ++r) {
    ASSERT_TRUE(runs[r].error.empty()) << "rank " << r << ": " << runs[r].error;
    EXPECT_EQ(runs[r].logits, runs[0].logits) << "rank " << r;
  }
  EXPECT_TRUE(LogitsMatchWhole(runs[0], whole, "llama-tiny q8_0 tp=2 pp=2"));
  EXPECT_EQ(runs[0].tokens, whole.tokens);
}

TEST(PipelineParallelBatchTest, EveryStageRefusesMoreStagesThanLayersAtLoad) {
  RandomModelFile file("llama-tiny", "f32", 2);
  ASSERT_TRUE(file.status().ok()) << file.status().message();
  const StagesRun stages = RunStages(file.path(), 3, MakePrompts({4}, kVocabSize, 1), 0);
  for (const StepsResult& run : stages.runs) {
    EXPECT_THAT(run.error, HasSubstr("pipeline_parallel_size (-pp/--pipeline-parallel-size) 3 is "
                                     "more than the model's 2 layers"));
  }
}

}  // namespace
}  // namespace vllm::parallel_test
