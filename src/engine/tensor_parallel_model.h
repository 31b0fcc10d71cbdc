// Rank 0's model in a tensor- or pipeline-parallel engine: the engine, the runner and the sampler
// use it as any Model, and each Forward first sends the step to the other ranks
// (tensor_parallel_step.h), then runs rank 0's shard (or first stage), which ends with the whole
// vocabulary's logits on rank 0.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dist/communicator.h"
#include "model/model.h"

namespace vllm {

class TensorParallelModel final : public Model {
 public:
  struct Options {
    dist::Communicator* ranks = nullptr;  // required; this process is its rank 0
    // Called once the other ranks were told to stop (MPI: finalize at exit).
    std::function<void()> on_workers_stopped;
    // A step (or a KV storage announcement) still under way after step_timeout means a rank
    // stopped answering (vLLM's VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS): failure() says so, and
    // hang_exit_delay later on_hang runs (MPI: abort the job, so that it exits non-zero instead of
    // hanging). Zero: no watch.
    std::chrono::milliseconds step_timeout{0};
    std::chrono::milliseconds hang_exit_delay{2000};
    std::function<void()> on_hang;
  };
  // `shard`: rank 0's shard, loaded with ModelLoadOptions::tensor_parallel = options.ranks.
  TensorParallelModel(std::unique_ptr<Model> shard, Options options);
  // Sends the stop message (the ranks leave RunTensorParallelWorkerLoop).
  ~TensorParallelModel() override;

  const ModelConfig& config() const override { return shard_->config(); }
  // Sends the KV storage's shape when it is new to the ranks (AnnounceKvStorage), then the
  // batch, then runs the shard. A batch that cannot be sent (a LoRA adapter) is an error before
  // anything is sent.
  Status Forward(const ForwardBatch& batch, KvStorage& kv, float* logits) override;
  // Has the other ranks make their KV storage shaped as `kv` unless they hold one already, and
  // returns once they have: the engine calls it once its storage exists, so that the first step
  // does not wait for theirs.
  Status AnnounceKvStorage(const KvStorage& kv);
  KvStorage::Options KvStorageOptionsOf(const KvStorage::Options& whole) const override {
    return shard_->KvStorageOptionsOf(whole);
  }
  bool accepts_input_embeds() const override { return shard_->accepts_input_embeds(); }
  int64_t weight_bytes() const override { return shard_->weight_bytes(); }
  std::optional<std::string> failure() const override;

 private:
  using Clock = std::chrono::steady_clock;
  // Marks a collective step as under way for the watch while it lives.
  class StepUnderWay {
   public:
    explicit StepUnderWay(TensorParallelModel& model);
    ~StepUnderWay();

   private:
    TensorParallelModel& model_;
  };
  // The watch thread's loop (Options::step_timeout).
  void WatchSteps();

  std::unique_ptr<Model> shard_;
  Options options_;
  // The storage whose shape the ranks hold (address and wire form): a new one is sent again.
  const KvStorage* announced_kv_ = nullptr;
  std::vector<uint8_t> announced_kv_options_;
  mutable std::mutex watch_mutex_;
  std::condition_variable watch_wake_;
  std::optional<Clock::time_point> step_started_;  // the step under way; guarded by watch_mutex_
  std::optional<std::string> failure_;             // guarded by watch_mutex_
  bool stopping_ = false;                          // guarded by watch_mutex_
  std::thread watch_;                              // with a step_timeout only
};

}  // namespace vllm
