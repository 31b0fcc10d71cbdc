// TensorParallelModel (rank 0) and RunTensorParallelWorkerLoop (rank 1) over two thread
// communicators, each rank holding its shard of the demo model: the steps rank 0 sends keep the
// ranks in step, the logits match the whole model's, and the stop message ends the worker.
#include "engine/tensor_parallel_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "dist/thread_communicator.h"
#include "engine/llm_engine.h"
#include "engine/tensor_parallel_step.h"
#include "engine/tensor_parallel_worker.h"
#include "engine/test_engine_args.h"
#include "model/forward_batch_wire.h"
#include "model/model_loader.h"

namespace vllm {
namespace {

using ::testing::HasSubstr;

const std::string kModelPath = std::string(VLLM_SHARED_DIR) + "/models/stories260K.gguf";

std::unique_ptr<KvStorage> MakeKv(const ModelConfig& config, int64_t num_blocks) {
  auto kv = KvStorage::Create({.num_layers = config.num_layers,
                               .num_blocks = num_blocks,
                               .block_size = 16,
                               .num_kv_heads = config.num_kv_heads,
                               .head_dim = config.head_dim});
  EXPECT_TRUE(kv.ok()) << kv.error();
  return kv ? std::move(*kv) : nullptr;
}

// One sequence's next chunk in block 1, with the last token's logits wanted.
ForwardBatch BatchOf(const std::vector<int32_t>& new_tokens, int32_t num_computed) {
  ForwardBatch batch;
  const std::vector<std::vector<int32_t>> tables = {{1}};
  EXPECT_TRUE(AppendSequence(new_tokens, num_computed, tables, 16, batch).ok());
  batch.logits_indices = {static_cast<int32_t>(new_tokens.size()) - 1};
  return batch;
}

int32_t Argmax(const std::vector<float>& logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

TEST(TensorParallelModelTest, TwoRanksFollowRankZerosStepsAndMatchTheWholeModel) {
  auto ranks = dist::CreateThreadCommunicators(2);
  ThreadPool pool({.num_threads = 1});
  ThreadPool worker_pool({.num_threads = 1});
  std::promise<void> worker_loaded;
  auto worker = std::async(std::launch::async, [&]() -> Status {
    auto shard =
        LoadModelFromPath(kModelPath, {.pool = &worker_pool, .tensor_parallel = ranks[1].get()});
    worker_loaded.set_value();
    if (!shard) return Error{shard.error()};
    return RunTensorParallelWorkerLoop(*shard->model, *ranks[1]);
  });
  auto whole = LoadModelFromPath(kModelPath, {.pool = &pool});
  ASSERT_TRUE(whole.ok()) << whole.error();
  auto shard = LoadModelFromPath(kModelPath, {.pool = &pool, .tensor_parallel = ranks[0].get()});
  worker_loaded.get_future().wait();
  ASSERT_TRUE(shard.ok()) << shard.error();
  bool workers_stopped = false;
  auto model = std::make_unique<TensorParallelModel>(
      std::move(shard->model),
      TensorParallelModel::Options{.ranks = ranks[0].get(),
                                   .on_workers_stopped = [&] { workers_stopped = true; }});
  const ModelConfig& whole_config = whole->model->config();
  EXPECT_EQ(model->config().vocab_size, whole_config.vocab_size);
  EXPECT_EQ(model->config().num_kv_heads * 2, whole_config.num_kv_heads);

  auto whole_kv = MakeKv(whole_config, 4);
  auto kv = MakeKv(model->config(), 4);
  std::vector<float> whole_logits(whole_config.vocab_size);
  std::vector<float> logits(whole_config.vocab_size);
  // A prompt, then greedy decode steps: each step's logits as the whole model's (the sharded
  // sums round differently, not by more than this), and the same greedy token.
  std::vector<int32_t> tokens = {1, 403, 407, 261, 378};
  int32_t num_computed = 0;
  for (int step = 0; step < 6; ++step) {
    const ForwardBatch batch = BatchOf({tokens.begin() + num_computed, tokens.end()}, num_computed);
    ASSERT_TRUE(whole->model->Forward(batch, *whole_kv, whole_logits.data()).ok());
    Status forward = model->Forward(batch, *kv, logits.data());
    ASSERT_TRUE(forward.ok()) << forward.message();
    float max_difference = 0;
    for (size_t i = 0; i < logits.size(); ++i) {
      max_difference = std::max(max_difference, std::abs(logits[i] - whole_logits[i]));
    }
    EXPECT_LT(max_difference, 1e-3f) << "step " << step;
    ASSERT_EQ(Argmax(logits), Argmax(whole_logits)) << "step " << step;
    num_computed = static_cast<int32_t>(tokens.size());
    tokens.push_back(Argmax(logits));
  }

  // A batch that cannot be sent fails before anything is sent: the ranks stay in step.
  lora::LoraWeights adapter;
  ForwardBatch with_adapter = BatchOf({tokens.back()}, num_computed);
  with_adapter.seq_loras = {&adapter};
  Status refused = model->Forward(with_adapter, *kv, logits.data());
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), HasSubstr("LoRA adapters are not supported with tensor"));
  // A new storage (after sleep and wake-up) is announced again; the prompt recomputed in it.
  auto new_kv = MakeKv(model->config(), 6);
  std::vector<float> recomputed(whole_config.vocab_size);
  ASSERT_TRUE(model->Forward(BatchOf({1, 403, 407, 261, 378}, 0), *new_kv, recomputed.data()).ok());
  ASSERT_TRUE(
      whole->model->Forward(BatchOf({1, 403, 407, 261, 378}, 0), *whole_kv, whole_logits.data())
          .ok());
  EXPECT_EQ(Argmax(recomputed), Argmax(whole_logits));

  model.reset();  // sends the stop message
  EXPECT_TRUE(workers_stopped);
  Status worker_status = worker.get();
  EXPECT_TRUE(worker_status.ok()) << worker_status.message();
}

TEST(TensorParallelModelTest, TheWorkerRefusesAForwardBeforeTheKvStorage) {
  auto ranks = dist::CreateThreadCommunicators(2);
  ThreadPool pool({.num_threads = 1});
  auto shard = LoadModelFromPath(kModelPath, {.pool = &pool});
  ASSERT_TRUE(shard.ok()) << shard.error();
  auto worker = std::async(std::launch::async,
                           [&] { return RunTensorParallelWorkerLoop(*shard->model, *ranks[1]); });
  auto batch = SerializeForwardBatch(BatchOf({1, 2}, 0));
  ASSERT_TRUE(batch.ok());
  ASSERT_TRUE(SendTensorParallelMessage(*ranks[0], TensorParallelMessage::kForward, *batch).ok());
  Status worker_status = worker.get();
  ASSERT_FALSE(worker_status.ok());
  EXPECT_THAT(worker_status.message(), HasSubstr("a forward before the KV storage's shape"));
}

// A rank that does not answer: once a step has taken step_timeout, failure() gives the reason,
// and hang_exit_delay later on_hang runs (here it lets the rank answer, so the step completes).
TEST(TensorParallelModelTest, AStepThatDoesNotFinishInTimeIsReportedThenEndsTheJob) {
  auto ranks = dist::CreateThreadCommunicators(2);
  ThreadPool pool({.num_threads = 1});
  ThreadPool worker_pool({.num_threads = 1});
  auto worker_shard =
      LoadModelFromPath(kModelPath, {.pool = &worker_pool, .tensor_parallel = ranks[1].get()});
  auto shard = LoadModelFromPath(kModelPath, {.pool = &pool, .tensor_parallel = ranks[0].get()});
  ASSERT_TRUE(worker_shard.ok()) << worker_shard.error();
  ASSERT_TRUE(shard.ok()) << shard.error();
  std::promise<void> answer;
  auto worker = std::async(std::launch::async, [&] {
    answer.get_future().wait();  // the rank hangs until on_hang
    return RunTensorParallelWorkerLoop(*worker_shard->model, *ranks[1]);
  });
  std::chrono::steady_clock::time_point hang_reported;
  TensorParallelModel model(
      std::move(shard->model),
      TensorParallelModel::Options{.ranks = ranks[0].get(),
                                   .step_timeout = std::chrono::milliseconds(200),
                                   .hang_exit_delay = std::chrono::milliseconds(100),
                                   .on_hang = [&] {
                                     hang_reported = std::chrono::steady_clock::now();
                                     answer.set_value();
                                   }});
  EXPECT_EQ(model.failure(), std::nullopt);
  auto kv = MakeKv(model.config(), 4);
  std::vector<float> logits(model.config().vocab_size);
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(model.Forward(BatchOf({1, 403, 407}, 0), *kv, logits.data()).ok());
  EXPECT_GE(hang_reported - started, std::chrono::milliseconds(300));
  ASSERT_TRUE(model.failure().has_value());
  EXPECT_THAT(*model.failure(), HasSubstr("a step of the model's 2 ranks has not finished in "
                                          "0.2 s (VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS)"));
  // A failed model takes no more steps (they would wait for the rank again).
  Status refused = model.Forward(BatchOf({1}, 0), *kv, logits.data());
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), HasSubstr("a rank stopped answering"));
}

// Outside an MPI job of the right size the engine says how to start one; bad sizes are refused
// before anything loads.
TEST(TensorParallelModelTest, TheEngineNeedsAnMpiJobOfTensorParallelSizeRanks) {
  EngineArgs args = StoriesArgs();
  args.tensor_parallel_size = 2;
  auto outside = LLMEngine::Create(args);
  ASSERT_FALSE(outside.ok());
  EXPECT_THAT(outside.error(), HasSubstr("tensor_parallel_size 2 runs as 2 MPI ranks"));
  EXPECT_THAT(outside.error(), HasSubstr("vllm-cpp serve|generate|chat|bench MODEL -tp 2"));
  ::setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  auto wrong_size = LLMEngine::Create(args);
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::unsetenv("OMPI_COMM_WORLD_RANK");
  ASSERT_FALSE(wrong_size.ok());
  EXPECT_THAT(wrong_size.error(), HasSubstr("needs an MPI job of 2 ranks; mpirun started 3"));
  for (int size : {0, -1, kMaxTensorParallelSize + 1}) {
    args.tensor_parallel_size = size;
    auto refused = LLMEngine::Create(args);
    ASSERT_FALSE(refused.ok());
    EXPECT_THAT(refused.error(), HasSubstr("tensor_parallel_size (-tp/--tensor-parallel-size) "
                                           "must be 1 to 64, got " +
                                           std::to_string(size)));
  }
}

}  // namespace
}  // namespace vllm
